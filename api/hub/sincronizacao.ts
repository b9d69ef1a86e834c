import { Job } from 'bullmq';
import { config } from '../../config';
import { logger } from '../../lib/logger';
import { avisarSeNenhumWorker, esperarFimDoJob, eventosDaFila, fila, tokenDaFila } from '../../queues/fila';
import { filaHubAplicativoSync } from '../../queues/hub-aplicativo-sync';

const log = logger('hub-aplicativos');

/** What a caller of the sync learns of it. */
export interface SincronizacaoEsperada {
  /** the sync joined had started before the call: it may have read identity before the caller's reason to sync existed */
  jaRodava: boolean;
  /** which run that was (its job's creation time): a later call that joins the same run is no newer sync */
  rodada?: number;
  /** it read identity and brought the hub's applications up to date within the wait; false when it failed, gave up its turn, or is still running */
  concluida: boolean;
}

/**
 * SPEC 4.4 rule 3, DESIGN §5: the sync with identity runs as a queue job shared by concurrent
 * callers (listings, and publications of an application the hub does not know yet); each waits
 * for it a bounded time and goes on anyway when identity fails or is slow. A master's token is
 * the sync's own (rule 3); without one, the hub's.
 */
export async function esperarSincronizacao(tokenDoMaster?: string): Promise<SincronizacaoEsperada> {
  let jaRodava = false;
  let rodada: number | undefined;
  try {
    // a master's token goes apart from the job's data, which the dashboard shows
    if (tokenDoMaster) await tokenDaFila.guardar(filaHubAplicativoSync, tokenDoMaster);
    // one shared job per kind of caller: a master joining a non-master's job would sync with the
    // hub's token instead of its own (rule 3); the queue runs them one after the other
    const jobId = tokenDoMaster ? 'sincronizar-como-master' : 'sincronizar';
    const q = fila(filaHubAplicativoSync);
    // only a run under way may have read identity before this call: one waiting, delayed (handed
    // back by a shutdown) or moved back after a stall reads it after; an ended one is removed
    const existente = await Job.fromId(q, jobId);
    jaRodava = Boolean(existente?.processedOn) && (await existente!.getState()) === 'active';
    rodada = jaRodava ? existente!.timestamp : undefined;
    await q.add('sincronizar', { doChamador: Boolean(tokenDoMaster) }, { jobId });
    const resultado = await esperarFimDoJob(q, jobId, eventosDaFila(filaHubAplicativoSync), config().hub.esperaSyncMs);
    // a sync without the hub's token, or that waited out another's turn, read nothing
    return { jaRodava, rodada, concluida: !(resultado && typeof resultado === 'object' && 'ignorado' in resultado) };
  } catch (err) {
    log.warn({ erro: (err as Error).message }, 'seguindo sem a sincronização com o identity completa');
    await avisarSeNenhumWorker(filaHubAplicativoSync);
    return { jaRodava, rodada, concluida: false };
  }
}
