import { config } from '../../config';
import { banco, dataSql, escreverJuntos, lerPorTexto } from '../../lib/database';
import { comCausa } from '../../lib/erros';
import { logger } from '../../lib/logger';
import { largarResposta } from '../../lib/resposta';
import { ConfigSystem } from '../../models/sales';
import { acessoDe, sistemaParaChamar } from './config-system';
import { MARCA_DA_DECISAO } from './registro';

const log = logger('sales-transferencia');

/** Conversations tried per system and run (esperandoNoSistema says which); the rest go in the next run. */
const POR_SISTEMA_E_RODADA = 200;

interface Esperando {
  id: string;
  config_system_suporte_id: string;
  suporte_conta_id: number | null;
  suporte_conversa_id: number;
  ultima_mensagem_do_contato_em: Date;
  /** the contact's first message still unanswered (INICIO_DA_ESPERA) */
  espera_desde: Date;
  /** refusals of this wait (an earlier wait's do not count) */
  transferencia_falhas: number;
}

/** An answer of the chat platform other than a 2xx, with its status. */
class RespostaDaPlataforma extends Error {
  constructor(readonly status: number, mensagem: string) {
    super(mensagem);
  }
}

/** What abrirNoSuporte answers for a conversation the platform does not have (deleted there, say). */
const NAO_ENCONTRADA = 'nao_encontrada';

/** A conversation of the chat platform as its API addresses it, with the system's API token. */
interface NaPlataforma {
  url: string;
  token: string;
}

function naPlataforma(c: Esperando, sistema: ConfigSystem | null): NaPlataforma {
  const acesso = sistema && acessoDe(sistema);
  const conta = c.suporte_conta_id ?? acesso?.contaId ?? null;
  if (!acesso?.tokenApi || conta === null) throw new Error('the chat platform system has no API address, account or token');
  return { url: `${acesso.url}/api/v1/accounts/${conta}/conversations/${c.suporte_conversa_id}`, token: acesso.tokenApi };
}

/**
 * A call to the chat platform's API. A redirect is not followed (it would carry the API token to
 * another address) and only a 2xx with a JSON body is an answer. `sinal` (a worker's shutdown)
 * cuts a call under way: a run stopping does not wait out the platform's time-outs.
 */
async function chamarPlataforma(p: NaPlataforma, caminho: string, corpo?: object, sinal?: AbortSignal): Promise<Record<string, unknown>> {
  const res = await fetch(`${p.url}${caminho}`, {
    method: corpo ? 'POST' : 'GET',
    headers: { 'content-type': 'application/json', api_access_token: p.token },
    body: corpo && JSON.stringify(corpo),
    redirect: 'manual',
    signal: sinal ? AbortSignal.any([AbortSignal.timeout(10_000), sinal]) : AbortSignal.timeout(10_000),
  });
  if (!res.ok) {
    largarResposta(res);
    throw new RespostaDaPlataforma(res.status, `the chat platform answered ${res.status} to ${corpo ? 'POST' : 'GET'} conversations/{id}${caminho}`);
  }
  const json = (await res.json().catch(() => null)) as unknown;
  if (!json || typeof json !== 'object') throw new Error('the chat platform answered no JSON object');
  return json as Record<string, unknown>;
}

/** The conversation's status as the chat platform has it now; undefined when it does not say. */
async function statusNaPlataforma(p: NaPlataforma, sinal?: AbortSignal): Promise<unknown> {
  return (await chamarPlataforma(p, '', undefined, sinal)).status;
}

/** Statuses of the platform in which the conversation is no longer with the robot nor with the team's queue. */
const FORA_DA_FILA = new Set(['resolved', 'snoozed']);

/**
 * Opens the conversation in the chat platform (Chatwoot's toggle_status), as the team would,
 * unless the platform says it has left the robot otherwise: the stored `pending` may be stale (a
 * status webhook lost) or the team's own correction (a PATCH, which changes nothing in the
 * platform, SPEC 4.6 rule 6), and toggling would reopen a conversation resolved or snoozed there.
 * Answers null when the hand-over stands (opened now, or already open there: an earlier call
 * whose answer was lost), or the platform's status when it left the conversation as it is
 * (NAO_ENCONTRADA when it has no such conversation: nothing to open, and no refusal of the
 * platform, which answered). A
 * platform that does not tell the status (an agent bot's token, refused the conversation's
 * reading by Chatwoot versions that allow bots only a few calls; an answer without it) is
 * toggled as before. Only the platform's answer that the conversation is open counts; when the
 * toggle fails, the platform is asked again, since a lost answer (a time-out, a cut connection) may
 * hide a change it made.
 */
async function abrirNoSuporte(c: Esperando, sistema: ConfigSystem | null, sinal?: AbortSignal): Promise<string | null> {
  const p = naPlataforma(c, sistema);
  const antes = await statusNaPlataforma(p, sinal).catch((err) =>
    err instanceof RespostaDaPlataforma && err.status === 404 ? NAO_ENCONTRADA : undefined,
  );
  if (antes === NAO_ENCONTRADA) return antes;
  if (antes === 'open') return null;
  if (typeof antes === 'string' && FORA_DA_FILA.has(antes)) return antes;
  try {
    const corpo = (await chamarPlataforma(p, '/toggle_status', { status: 'open' }, sinal)) as { payload?: { current_status?: unknown } };
    if (corpo.payload?.current_status !== 'open') throw new Error('the chat platform did not answer that the conversation is open');
  } catch (err) {
    if ((await statusNaPlataforma(p, sinal).catch(() => null)) !== 'open') throw err;
  }
  return null;
}

/**
 * Tries of one wait after which it is given up: 30 take about a day (1 + 2 + ... + 32 minutes,
 * then one an hour). A conversation the platform lost, or resolved there with its status webhook
 * lost, would otherwise be asked about every hour for good, more of them every month.
 */
export const TENTATIVAS_POR_ESPERA = 30;

/**
 * A wait may be tried now (one `?`: the moment a back-off must be due by): never refused, its
 * back-off due and its tries not used up, or the refusals were of an earlier wait (`inicio`, the
 * start of this one, is later than the refused one's).
 */
const PODE_TENTAR = (inicio: string) => `(c.transferencia_tentar_apos IS NULL
  OR (c.transferencia_tentar_apos <= ? AND c.transferencia_falhas < ${TENTATIVAS_POR_ESPERA})
  OR c.transferencia_falhou_contato_em < ${inicio})`;

/**
 * Still waiting for an answer (the run's list may be minutes old), and not handed over since the
 * contact's last message: a late event that set a handed-over conversation back to `pending`
 * does not make it go again. A wait is told apart by the platform's times only (the contact's
 * message, as the hand-over recorded it), never against `transferida_em`, our own clock: with the
 * two clocks apart, a new message would be taken for an old one, or an old one for a new one. The
 * generated column `espera_do_contato_em` (sales migration 0023) holds the same test for the index
 * the run reads by: a change here is a change there too.
 */
export const SEM_RESPOSTA = `c.deletado_em IS NULL AND c.ultima_mensagem_do_contato_em IS NOT NULL
  AND (c.ultima_mensagem_do_robo_em IS NULL OR c.ultima_mensagem_do_robo_em < c.ultima_mensagem_do_contato_em)
  AND (c.transferida_contato_em IS NULL OR c.transferida_contato_em < c.ultima_mensagem_do_contato_em)`;

/**
 * When the contact began to wait: their first message after the robot's last answer (one in the
 * same second answers it) and after the last message a hand-over covered. A contact who writes
 * again while waiting ("anyone there?") does not start the wait over.
 */
const INICIO_DA_ESPERA = `(SELECT MIN(m.criada_em) FROM conversa_mensagem m
   WHERE m.conversa_id = c.id AND m.autor = 'contato'
     AND (c.ultima_mensagem_do_robo_em IS NULL OR m.criada_em > c.ultima_mensagem_do_robo_em)
     AND (c.transferida_contato_em IS NULL OR m.criada_em > c.transferida_contato_em))`;

/** A refused hand-over waits 1 minute before the next try, then twice as long each time, up to an hour. */
export function esperaAposFalhas(falhas: number): number {
  return Math.min(60_000 * 2 ** (falhas - 1), 3_600_000);
}

/** Failures in a row after which a run leaves the rest of that system's conversations for the next one. */
const FALHAS_SEGUIDAS_POR_SISTEMA = 3;

/** A run's progress: conversations looked at (`vistas`) of those waiting (`de`), and the outcomes so far. */
export interface ProgressoDaTransferencia {
  vistas: number;
  de: number;
  transferidas: number;
  falhas: number;
}

/**
 * The hand-over trigger: a conversation with the robot (`pending`) whose contact has waited longer
 * than SALES_TRANSFERENCIA_ESPERA_SEGUNDOS since a message the robot has not answered goes to the
 * team. It is opened in the chat platform first; only then is `open`, `transferida_em` and
 * `transferida_motivo = sem_resposta` recorded. One the platform refuses stays pending and is
 * tried again after a wait that doubles with each refusal (esperaAposFalhas), and given up after
 * TENTATIVAS_POR_ESPERA; a new wait (the robot answered, the contact wrote again) starts over. In
 * a run, waits not tried yet go before those tried again, so conversations that always fail do not
 * keep the others waiting. Each system has its own places in a run, and one that fails three times in a
 * row is left alone for the rest of it, so a system the platform refuses never holds back the others. Conversations of
 * a system without the platform's address, account or API token (or inactive, or deleted) are not
 * tried.
 */
export async function transferirSemResposta(
  agora = new Date(),
  aoProgredir: (p: ProgressoDaTransferencia) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<{ transferidas: number; falhas: number }> {
  const { transferenciaEsperaSegundos, transferenciaIntervaloSegundos } = config().sales;
  const limite = dataSql(new Date(agora.getTime() - transferenciaEsperaSegundos * 1000));
  // a back-off runs from the refusal, some way into its run, and runs start one interval apart:
  // one due within half an interval goes now, not a whole interval after it was due
  const devidaAte = dataSql(new Date(agora.getTime() + (transferenciaIntervaloSegundos * 1000) / 2));
  const sales = banco('sales');
  // only systems that can be called: a conversation of one that never could would keep its place forever
  const sistemas = await lerPorTexto<{ id: string }>(
    sales,
    `SELECT id FROM config_system WHERE tipo = 'suporte' AND deletado_em IS NULL AND ativo AND url IS NOT NULL AND token_api_cifrado IS NOT NULL`,
    [],
  );
  // each system gets its own places, so one whose backlog the platform keeps refusing cannot take
  // every place of the run from the others; the systems then take turns (each one's oldest wait,
  // then each one's second...), so a slow one cannot hold the others' first ones back either
  const porSistema = await Promise.all(sistemas.map((sistema) => esperandoNoSistema(sistema.id, limite, devidaAte)));
  const esperando = porSistema
    .flatMap((lista) => lista.map((c, vez) => ({ c, vez })))
    .sort((a, b) => a.vez - b.vez || a.c.espera_desde.getTime() - b.c.espera_desde.getTime())
    .map(({ c }) => c);
  let transferidas = 0;
  let falhas = 0;
  // a run's conversations share few systems: each one is read once
  const lidos = new Map<string, ConfigSystem | null>();
  const falhasSeguidas = new Map<string, number>();
  for (const [vistas, c] of esperando.entries()) {
    // asked to stop (a worker's shutdown): between two calls, the rest waiting for the next run
    if (sinal?.aborted) break;
    // each call to the platform may take seconds: the dashboard follows the run
    if (vistas > 0) aoProgredir({ vistas, de: esperando.length, transferidas, falhas });
    const sistema = c.config_system_suporte_id;
    if ((falhasSeguidas.get(sistema) ?? 0) >= FALHAS_SEGUIDAS_POR_SISTEMA) continue;
    try {
      // the robot may have answered (or the team taken it) since the list was read, or a run beside
      // this one (its job's lock lapsed while it was slow) been refused and put this wait off
      const [aindaEspera] = await lerPorTexto<{ id: string }>(
        sales,
        `SELECT c.id FROM conversa c WHERE c.id = ? AND c.status = 'pending' AND ${SEM_RESPOSTA} AND ${INICIO_DA_ESPERA} < ?
            AND ${PODE_TENTAR(INICIO_DA_ESPERA)}`,
        [c.id, limite, devidaAte],
      );
      if (!aindaEspera) continue;
      // the database failing to read the system is no refusal by the platform: it goes to the outer
      // catch, the conversation's wait unchanged, and the next conversation reads the system again
      if (!lidos.has(sistema)) lidos.set(sistema, await sistemaParaChamar(sistema));
      let naPlataforma: string | null;
      try {
        naPlataforma = await abrirNoSuporte(c, lidos.get(sistema)!, sinal);
      } catch (err) {
        // cut by the shutdown, not refused: the wait stays as it was, for the next run (which
        // asks the platform first, so a toggle that did land is recorded then)
        if (sinal?.aborted) break;
        falhas++;
        falhasSeguidas.set(sistema, (falhasSeguidas.get(sistema) ?? 0) + 1);
        log.warn({ erro: comCausa(err as Error), conversa_id: c.id, falhas: c.transferencia_falhas + 1 }, 'transferência adiada');
        await adiar(c, agora);
        continue;
      }
      falhasSeguidas.set(sistema, 0);
      if (naPlataforma !== null) {
        // resolved, snoozed or not found there: nothing to hand over now; asked again later, as
        // after a refusal, in case the team gives it back to the robot while this contact still waits
        log.info({ conversa_id: c.id, status_na_plataforma: naPlataforma }, 'conversa resolvida, adiada ou ausente na plataforma: não transferida');
        await adiar(c, agora);
        continue;
      }
      if (await gravarTransferencia(c)) transferidas++;
      else log.warn({ conversa_id: c.id }, 'conversa aberta na plataforma, mas mudou antes de a transferência ser gravada');
    } catch (err) {
      // the database failing for one conversation does not end the run for the others
      log.error({ err, conversa_id: c.id }, 'transferência não gravada');
    }
  }
  if (esperando.length) {
    aoProgredir({ vistas: esperando.length, de: esperando.length, transferidas, falhas });
    log.info({ transferidas, falhas }, 'transferências sem resposta');
  }
  return { transferidas, falhas };
}

/**
 * A system's conversations waiting for a hand-over that may be tried now: waits not tried yet
 * first, then those tried again, each oldest wait first (a backlog the platform keeps refusing is
 * the oldest, and after three refusals in a row the run leaves the system: first, it would keep
 * every new wait behind it). Read
 * in its index's order (`espera_do_contato_em`: the contact's last message while SEM_RESPOSTA
 * holds, null otherwise, so the conversations the robot answered last, pending for good, are not
 * read at every run) and stopped at the run's places, so the
 * wait's start, read from the messages, is read for those only: a backlog of thousands of pending
 * conversations is not read whole every minute (33,000 took 3 s, sorted by the start). A refusal's
 * back-off holds while the wait it was for goes on (its start, `transferencia_falhou_contato_em`);
 * the cheap test in WHERE lets through only those it may not hold.
 */
async function esperandoNoSistema(sistemaId: string, limite: string, devidaAte: string): Promise<Esperando[]> {
  const linhas = await lerPorTexto<Esperando & { falhou_contato_em: Date | null; tentar_apos: Date | null }>(
    banco('sales'),
    `SELECT c.id, c.config_system_suporte_id, c.suporte_conta_id, c.suporte_conversa_id, c.ultima_mensagem_do_contato_em,
        c.transferencia_falhas, c.transferencia_falhou_contato_em AS falhou_contato_em, c.transferencia_tentar_apos AS tentar_apos,
        ${INICIO_DA_ESPERA} AS espera_desde
       FROM conversa c JOIN config_system s ON s.id = c.config_system_suporte_id
      WHERE c.config_system_suporte_id = ? AND c.status = 'pending' AND c.deletado_em IS NULL AND c.espera_do_contato_em IS NOT NULL
        AND COALESCE(c.suporte_conta_id, s.conta_id) IS NOT NULL
        AND ${PODE_TENTAR('c.ultima_mensagem_do_contato_em')}
     HAVING espera_desde < ? AND ${PODE_TENTAR('espera_desde')}
      ORDER BY c.espera_do_contato_em LIMIT ${POR_SISTEMA_E_RODADA}`,
    [sistemaId, devidaAte, limite, devidaAte],
  );
  return linhas
    .map(({ falhou_contato_em, tentar_apos: _, ...c }) => ({
      ...c,
      // refusals of an earlier wait do not count for this one
      transferencia_falhas: falhou_contato_em && falhou_contato_em >= c.espera_desde ? c.transferencia_falhas : 0,
    }))
    .sort((a, b) => Number(a.transferencia_falhas > 0) - Number(b.transferencia_falhas > 0) || a.espera_desde.getTime() - b.espera_desde.getTime());
}

async function adiar(c: Esperando, agora: Date): Promise<void> {
  const falhas = c.transferencia_falhas + 1;
  if (falhas === TENTATIVAS_POR_ESPERA) log.warn({ conversa_id: c.id, falhas }, 'transferência abandonada: a espera só volta a contar com uma nova mensagem do contato');
  // a run slowed by time-outs counts the wait from the refusal, not from its start
  const falhouEm = new Date(Math.max(agora.getTime(), Date.now()));
  // the refused wait is kept by its start's platform time: a wait that begins later starts over
  await escreverJuntos(banco('sales'), [
    [
      `UPDATE conversa SET transferencia_falhas = ?, transferencia_falhou_em = ?, transferencia_falhou_contato_em = ?,
          transferencia_tentar_apos = ? WHERE id = ?`,
      [falhas, dataSql(falhouEm), dataSql(c.espera_desde), dataSql(new Date(falhouEm.getTime() + esperaAposFalhas(falhas))), c.id],
    ],
  ]);
}

/**
 * Records the hand-over the platform accepted, whatever was written meanwhile (the contact
 * writing again, the robot answering late): the conversation is open in the platform, with the
 * team, who see every message already there, so the contact's last one, by the platform's time,
 * is the one the hand-over answered (`transferida_contato_em`). Its own webhook of the change may
 * have recorded `open` first. Only a conversation deleted, resolved or snoozed during the call, or
 * one whose hand-over of this wait or a later one another run recorded meanwhile, is left as it is:
 * told by the platform's time of the contact's message it covers, never by `transferida_em`,
 * written by whichever worker process's clock (two apart by more than the wait would take a new
 * hand-over for an old one, or the other way round).
 * The `open` is our decision about the status, as a PATCH's is (conversas.ts): it keeps the
 * platform's `updated_at` of the copy it was recorded over (`status_corrigido_sobre`, in SQL from
 * `suporte_atualizada_em`; with none known yet, the moment it is recorded: registro.ts
 * MARCA_DA_DECISAO), so a copy not newer than that one (the contact's message event built
 * before the hand-over and delivered after it, which carries the conversation as it stood) leaves
 * `open`, while the platform's own later change (its status event of the hand-over, the team
 * giving the conversation back) applies (registro.ts).
 */
async function gravarTransferencia(c: Esperando): Promise<boolean> {
  const momento = dataSql(new Date());
  const [gravadas] = await escreverJuntos(banco('sales'), [
    [
      `UPDATE conversa c SET c.status = 'open', c.transferida_em = ?, c.transferida_motivo = 'sem_resposta', c.atualizado_em = ?,
          c.transferida_contato_em = c.ultima_mensagem_do_contato_em, c.status_corrigido_sobre = ${MARCA_DA_DECISAO},
          c.transferencia_falhas = 0, c.transferencia_falhou_em = NULL, c.transferencia_falhou_contato_em = NULL, c.transferencia_tentar_apos = NULL
        WHERE c.id = ? AND c.deletado_em IS NULL AND c.status IN ('pending', 'open')
          AND (c.transferida_contato_em IS NULL OR c.transferida_contato_em < ?)`,
      [momento, momento, c.id, dataSql(c.ultima_mensagem_do_contato_em)],
    ],
  ]);
  return gravadas > 0;
}
