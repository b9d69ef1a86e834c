import PQueue from 'p-queue';
import { IndexHints, LOCK, Op, QueryTypes, Transaction, WhereOptions } from 'sequelize';
import { config } from '../../config';
import { agrupar } from '../../lib/agrupar';
import { banco, dataSql, escreverJuntos, LEITURA_CONFIRMADA, lerDemorado, lerLinhas, lerPorTexto, repetirEmConflito, valorPorId } from '../../lib/database';
import { GravadorEmLotes } from '../../lib/lotes';
import { emSegundoPlano } from '../../lib/lifecycle';
import { logger } from '../../lib/logger';
import { redis } from '../../lib/redis';
import { Aplicativo, Assinatura, Entrega, Evento, TentativaDeEntrega } from '../../models/hub';
import { SITUACOES_DA_ENTREGA, SituacaoDaEntrega } from '../../models/hub/entrega';
import { iso } from '../../models/shared/base';
import { fila } from '../../queues/fila';
import { atrasoDaProximaTentativa, FalhaDeTentativa, filaHubEntrega, LOTE_MAXIMO, RETENTATIVAS_DO_LOTE } from '../../queues/hub-entrega';
import { conflito, naoEncontrado } from '../shared/errors';
import { offset, PaginaNumerada } from '../shared/paginacao';
import { assinarEntrega, chavesQueAssinam } from './assinador';
import { enviarPost, ResultadoDoEnvio } from './envio';

const log = logger('hub-entregas');

/**
 * Gives deliveries already stored a job of their own (job id = delivery id: adding twice is a
 * no-op), run after `atrasoMs`.
 */
export async function enfileirarEntregas(ids: string[], atrasoMs = 0): Promise<void> {
  if (!ids.length) return;
  const opts = (id: string) => ({ jobId: id, ...(atrasoMs > 0 && { delay: atrasoMs }) });
  await fila(filaHubEntrega).addBulk(ids.map((id) => ({ name: 'entregar', data: { id }, opts: opts(id) })));
}

/** The first attempts of some published events: one `entregar-lote` job, `id` its job id. */
export interface LoteDeEntregas {
  id: string;
  entregas: string[];
}

/**
 * Cuts a batch of publications into jobs of about LOTE_MAXIMO deliveries, an event's deliveries
 * never split (one with more subscriptions than that makes a job of its own), and writes each
 * event's job id in its `lote`: the id is the job's first event's, so adding the job again (a
 * repeated publication) is a no-op while it is queued.
 */
export function dividirEmLotes(eventos: { id: string; lote: string | null }[], entregas: { id: string; evento_id: string }[]): LoteDeEntregas[] {
  const porEvento = agrupar(entregas, (e) => e.evento_id, (e) => e.id);
  const lotes: LoteDeEntregas[] = [];
  let atual: LoteDeEntregas | undefined;
  for (const evento of eventos) {
    const ids = porEvento.get(evento.id);
    if (!ids) continue;
    if (!atual || atual.entregas.length + ids.length > LOTE_MAXIMO) lotes.push((atual = { id: `lote-${evento.id}`, entregas: [] }));
    atual.entregas.push(...ids);
    evento.lote = atual.id;
  }
  return lotes;
}

/** Hands published deliveries to the queue for their first attempts: one queue write per batch of events. */
export async function enfileirarLotes(lotes: LoteDeEntregas[]): Promise<void> {
  if (!lotes.length) return;
  const opts = (l: LoteDeEntregas) => ({ jobId: l.id, ...RETENTATIVAS_DO_LOTE });
  await fila(filaHubEntrega).addBulk(lotes.map((l) => ({ name: 'entregar-lote', data: { entregas: l.entregas }, opts: opts(l) })));
}

/**
 * The first attempts of a published batch, side by side (DESIGN §5, docs/decisoes.md). A failed
 * one gets a job of its own, delayed to its next attempt. Each delivery is read when its turn
 * comes, and only one untouched since its creation is sent: one replayed or swept meanwhile has a
 * job of its own, which sends it. The batch may run again (its worker died, or an error other than
 * a failed attempt, say the database away, made it fail): a delivery already tried then only gets
 * the job its failure was to add, so nothing is sent twice but an attempt the crash cut short.
 * The batch fails, to run again, only after every delivery in it had its turn. Whenever it is to
 * run again (it fails, or shutdown put deliveries off), `aoRepetir` is told the deliveries its next
 * run is for, those that got no job of their own: a failed attempt the database took no record of
 * (failing then) leaves its row untouched, and the next run would send it again at once, ahead of
 * its job and the schedule.
 * `sinal` (shutdown): no attempt starts after it; the ones in flight end, and the answer counts
 * those left for the batch's next run. `aoProgredir` hears after each delivery's turn how many had it.
 */
export async function entregarLote(
  ids: string[],
  sinal?: AbortSignal,
  aoProgredir: (p: { feitas: number; de: number }) => void = () => undefined,
  aoRepetir: (restantes: string[]) => Promise<unknown> = async () => undefined,
): Promise<{ adiadas: number }> {
  const erros: unknown[] = [];
  const comJobProprio = new Set<string>();
  let adiadas = 0;
  let feitas = 0;
  const darJobProprio = (id: string, atrasoMs?: number) => enfileirarEntregas([id], atrasoMs).then(() => comJobProprio.add(id));
  await Promise.all(
    ids.map(async (id) => {
      try {
        const r = await emVaga(() => tentar(id, true, sinal), 'lote');
        if (r === null) adiadas++;
        // put off for its subscription's turn (tentar): a job of its own, and the batch goes on
        else if (typeof r === 'object') await darJobProprio(id, Math.max(0, r.ate - Date.now()));
      } catch (err) {
        if (!(err instanceof FalhaDeTentativa)) return void erros.push(err);
        await darJobProprio(id, err.atrasoMs).catch((e: unknown) => erros.push(e));
      } finally {
        aoProgredir({ feitas: ++feitas, de: ids.length });
      }
    }),
  );
  if (erros.length || adiadas) {
    // not kept (Redis out of reach, the job already gone): the next run reads each row, as before
    await aoRepetir(ids.filter((id) => !comJobProprio.has(id))).catch((err: unknown) => log.warn({ err }, 'entregas restantes do lote não guardadas'));
  }
  if (erros.length) {
    log.warn({ err: erros[0], falhas: erros.length, entregas: ids.length }, 'lote de entregas com falhas; será repetido');
    throw erros[0];
  }
  return { adiadas };
}

export type ResultadoDaEntrega = SituacaoDaEntrega | 'ignorada';

/** A delivery's own job that ran before the delivery's stored next attempt: it waits until `ate`. */
export interface Adiada {
  ate: number;
}

/** How early a job may run against the stored next attempt (clocks of two hosts) before it waits. */
const ADIANTAMENTO_TOLERADO_MS = 1000;

/**
 * Attempts in flight in this process, whatever their job: a batch job takes one of the worker's
 * slots (HUB_ENTREGA_CONCORRENCIA) but runs its deliveries side by side, so the worker's own count
 * would not bound them. A job of one delivery (a retry, a replay, one swept) goes ahead of the
 * batches' attempts already waiting: the worker may hold as many batches as it has slots, and it
 * would otherwise wait behind all of them.
 */
let vagas: PQueue | undefined;
const emVaga = <T>(tentativa: () => Promise<T>, daVez: 'lote' | 'sozinha'): Promise<T> =>
  (vagas ??= new PQueue({ concurrency: config().hub.entregaConcorrencia })).add(tentativa, { priority: daVez === 'sozinha' ? 1 : 0 });

/**
 * A slow subscription's turn. A subscriber that answers slowly, or not at all until its time-out,
 * would otherwise take every one of the worker's slots (HUB_ENTREGA_CONCORRENCIA) and hold up every
 * other subscription's deliveries. So each subscription's answers are timed (a moving average), and
 * one whose answers take a second or more has at most HUB_ENTREGA_POR_ASSINATURA attempts in flight
 * in the process while other attempts wait for a slot; past that, an attempt is put off (no attempt
 * spent) and its slot goes to the others. A subscriber that answers fast keeps every slot it can
 * use: a burst to it is no slower.
 */
interface VezDaAssinatura {
  emCurso: number;
  /** its answers' durations, ms: the plain average of the first five, then a fifth of each new one */
  duracaoMs: number;
  medidas: number;
  /** attempts put off since `desde`, each later one waiting longer */
  adiadas: number;
  desde: number;
}
const vezes = new Map<string, VezDaAssinatura>();
/** The subscriptions whose turn this process keeps (tests). */
export const assinaturasComVez = (): string[] => [...vezes.keys()];
const LENTA_A_PARTIR_DE_MS = 1_000;
const JANELA_DOS_ADIAMENTOS_MS = 60_000;
const ESPERA_MAXIMA_PELA_VEZ_MS = 5 * 60_000;

const vezDe = (assinaturaId: string): VezDaAssinatura => {
  let v = vezes.get(assinaturaId);
  if (!v) vezes.set(assinaturaId, (v = { emCurso: 0, duracaoMs: 0, medidas: 0, adiadas: 0, desde: 0 }));
  return v;
};

/**
 * How long an attempt put off for its subscription's turn waits, or 0 when it need not wait: about
 * when its turn comes (the subscription's usual answer time for each HUB_ENTREGA_POR_ASSINATURA put
 * off before it in the last minute), at most 5 minutes, a fifth either way, so a backlog of
 * thousands comes back spread out rather than all at once, each time to be put off again.
 */
function esperaPelaVez(v: VezDaAssinatura): number {
  const porAssinatura = config().hub.entregaPorAssinatura;
  // only when others wait for a slot: with slots to spare, a slow subscriber uses them as before
  if (v.duracaoMs < LENTA_A_PARTIR_DE_MS || v.emCurso < porAssinatura || !vagas?.size) return 0;
  const agora = Date.now();
  if (agora - v.desde > JANELA_DOS_ADIAMENTOS_MS) Object.assign(v, { desde: agora, adiadas: 0 });
  v.adiadas++;
  const vez = v.duracaoMs * (1 + v.adiadas / porAssinatura) * (0.8 + Math.random() * 0.4);
  return Math.max(1, Math.min(vez, ESPERA_MAXIMA_PELA_VEZ_MS));
}

/**
 * A worker runs many attempts at once (HUB_ENTREGA_CONCORRENCIA). Their reads, and the records of
 * their successes, reach the database in batches (lib/lotes.ts): a statement or two and one commit
 * for many deliveries, instead of five round trips and a commit each. A failure, rarer and needing
 * its own answer (was the delivery still pending?), is recorded alone.
 */
const leituras = new GravadorEmLotes<string, LinhaDaEntrega | undefined>(lerEntregas, { maximo: 100, gravadores: 2 });
const sucessos = new GravadorEmLotes<Sucesso, void>(registrarSucessos, {
  maximo: 200,
  gravadores: 2,
  // alone after a failed batch: its commit may have landed with only the answer lost, so the
  // attempt is written only if it is not there yet
  gravarUm: async (s) => void (await registrarSucessos([s], true)),
});

async function lerEntregas(ids: string[]): Promise<(LinhaDaEntrega | undefined)[]> {
  // the hot path of the hub: plain statements, without Sequelize's model layer (lib/database.ts).
  // `tipo` is the name the event was published under: a retry or a replay resends what was
  // published, whatever the type was renamed to since; only an event stored by a process older
  // than hub migration 0012 has none, and goes out under its type's current name, as before
  const linhas = await lerPorTexto<LinhaDaEntrega>(
    banco('hub'),
    `SELECT e.id, e.situacao, e.tentativas, ev.id AS evento_id, ev.versao, ev.dados, ev.criado_em AS evento_criado_em,
            origem.identificador_no_auth AS origem_no_auth, a.id AS assinatura_id,
            assinante.identificador_no_auth AS assinante_no_auth, assinante.ativo AS assinante_ativo, a.url_de_destino,
            a.maximo_de_tentativas, a.tempo_limite_em_segundos, a.ativa, a.deletada_em, COALESCE(ev.tipo, t.nome) AS tipo,
            e.proxima_tentativa_em, e.ultimo_erro, e.atualizada_em = e.criada_em AS intocada
       FROM entrega e
       JOIN evento ev ON ev.id = e.evento_id
       JOIN assinatura a ON a.id = e.assinatura_id
       JOIN tipo_de_evento t ON t.id = ev.tipo_de_evento_id
       JOIN aplicativo origem ON origem.id = ev.aplicativo_origem_id
       JOIN aplicativo assinante ON assinante.id = a.aplicativo_assinante_id
      WHERE e.id IN (?)`,
    [ids],
  );
  const porId = new Map(linhas.map((l) => [l.id, l]));
  return ids.map((id) => porId.get(id));
}

const TENTATIVA_DE_ENTREGA = 'tentativa_de_entrega (entrega_id, numero, iniciada_em, duracao_ms, status_http, erro, resposta)';

/**
 * Deliveries changed by a list of ids are reached through their key: with a few rows the planner
 * may range over the `situacao` index instead, and a statement locking that index's entries first
 * deadlocks with a worker recording an attempt (which locks the row, then changes those entries).
 */
const POR_ID = 'entrega FORCE INDEX (PRIMARY)';

/** entrega_id, numero, iniciada_em, duracao_ms, status_http, erro, resposta */
export type LinhaDaTentativa = [string, number, string, number, number | null, string | null, string | null];

export interface Sucesso {
  tentativa: LinhaDaTentativa;
  entregueEm: string;
}

/**
 * `seAindaNaoGravada`: a batch of one whose attempt is written only if this very attempt (its
 * number and start time: a replay numbers its attempts from 1 again) is not there yet.
 */
export async function registrarSucessos(lote: Sucesso[], seAindaNaoGravada = false): Promise<void[]> {
  if (seAindaNaoGravada && lote.length !== 1) throw new Error('registrarSucessos: the guarded form takes one success');
  // a deterministic statement: rows and CASE branches in id order
  const ordenado = [...lote].sort((a, b) => (a.tentativa[0] < b.tentativa[0] ? -1 : a.tentativa[0] > b.tentativa[0] ? 1 : 0));
  const porEntrega = (coluna: (s: Sucesso) => unknown) => valorPorId(ordenado, (s) => s.tentativa[0], coluna);
  const tentativas = porEntrega((s) => s.tentativa[1]);
  const em = porEntrega((s) => s.entregueEm);
  const [entregaId, numero, iniciadaEm] = lote[0].tentativa;
  const inserir: [string, unknown[]] = seAindaNaoGravada
    ? [
        `INSERT INTO ${TENTATIVA_DE_ENTREGA} SELECT ?, ?, ?, ?, ?, ?, ? FROM DUAL
          WHERE NOT EXISTS (SELECT 1 FROM tentativa_de_entrega WHERE entrega_id = ? AND numero = ? AND iniciada_em = ?)`,
        [...lote[0].tentativa, entregaId, numero, iniciadaEm],
      ]
    : [`INSERT INTO ${TENTATIVA_DE_ENTREGA} VALUES ?`, [ordenado.map((s) => s.tentativa)]];
  // a late success (a second run of the job, after the queue lost the first one's lock) never takes
  // back the attempts counted since, up to the error queue's
  // READ COMMITTED for the guarded form: its read takes no gap lock, so two of them never deadlock
  await escreverJuntos(
    banco('hub'),
    [
      inserir,
      [
        `UPDATE ${POR_ID} SET situacao = 'entregue', tentativas = GREATEST(tentativas, ${tentativas.sql}), entregue_em = ${em.sql},
                proxima_tentativa_em = NULL, ultimo_erro = NULL, atualizada_em = ${em.sql}
          WHERE id IN (?) AND situacao IN ('pendente', 'cancelada', 'fila_de_erro')`,
        [...tentativas.parametros, ...em.parametros, ...em.parametros, ordenado.map((s) => s.tentativa[0])],
      ],
    ],
    { leituraConfirmada: seAindaNaoGravada },
  );
  return lote.map(() => undefined);
}

/**
 * One attempt of one delivery (DESIGN §5). Sends only while the delivery is pending and its
 * subscription and subscriber active; records the attempt; throws `FalhaDeTentativa` while
 * attempts remain so the queue retries on the schedule; puts the delivery in the error queue after
 * the last one.
 * Shutdown: null when it came before the attempt could start (`sinal`), which then is not made, or
 * cut the attempt under way, which is not recorded; either is made by the job's next run.
 */
export function tentarEntrega(entregaId: string, sinal?: AbortSignal): Promise<ResultadoDaEntrega | Adiada | null> {
  return emVaga(() => tentar(entregaId, false, sinal), 'sozinha');
}

/**
 * `primeira`: from a batch, which makes the first attempt of a delivery untouched since it was
 * published, and only that.
 */
async function tentar(entregaId: string, primeira: boolean, sinal?: AbortSignal): Promise<ResultadoDaEntrega | Adiada | null> {
  if (sinal?.aborted) return null;
  // Everything that may wait on the database or Redis comes before the read; after it, only the
  // signatures (WebCrypto's, on libuv's thread pool: microseconds, more when file access holds the
  // pool) and, without a connection to reuse, the subscriber's lookup and connect, until the request
  // leaves: a deactivation committed before the read stops the attempt, one committed after it
  // meets an attempt already in flight (SPEC §6 rule 6).
  const assinantes = await chavesQueAssinam();
  const e = await leituras.guardar(entregaId);
  if (!e || e.situacao !== 'pendente') return 'ignorada';
  // a subscription or subscriber that no longer receives: its cancellation, after the change's
  // commit, may not have reached this one yet (or was cut short); an attempt never goes out
  if (e.deletada_em || !e.ativa || !e.assinante_ativo) {
    await Entrega.update({ situacao: 'cancelada', proxima_tentativa_em: null }, { where: { id: e.id, situacao: 'pendente' } });
    return 'cancelada';
  }
  if (e.tentativas >= e.maximo_de_tentativas) {
    // the subscription's maximum was lowered below the attempts already made: none more is sent
    await Entrega.update({ situacao: 'fila_de_erro', proxima_tentativa_em: null }, { where: { id: e.id, situacao: 'pendente' } });
    return 'fila_de_erro';
  }
  // run again at once after its worker died between recording a failure and handing the retry to
  // the queue (the stalled job comes back to the waiting list): the schedule, and a Retry-After, hold
  const marcada = e.proxima_tentativa_em?.getTime() ?? 0;
  if (!primeira && e.tentativas > 0 && marcada - Date.now() > ADIANTAMENTO_TOLERADO_MS) return { ate: marcada };
  // replayed or swept since it was published: its own job sends it
  if (primeira && e.tentativas === 0 && !e.intocada) return 'ignorada';
  if (primeira && e.tentativas > 0) {
    // tried by an earlier run of its batch, whose worker stopped before the next attempt had its job
    const retomada = new FalhaDeTentativa(e.ultimo_erro ?? 'tentativa anterior');
    retomada.atrasoMs = Math.max(0, marcada - Date.now());
    throw retomada;
  }
  const vez = vezDe(e.assinatura_id);
  const espera = esperaPelaVez(vez);
  if (espera > 0) {
    const ate = new Date(Date.now() + espera);
    // its next attempt is then (the sweep and the monitoring read it), in the round it was read in;
    // a first attempt goes to a job of its own (entregarLote): touched, the row tells a later run
    // of its batch (its worker died) to leave it to that job
    await banco('hub').query(
      `UPDATE ${POR_ID} SET proxima_tentativa_em = ?${primeira ? ', atualizada_em = GREATEST(?, criada_em + INTERVAL 1000 MICROSECOND)' : ''}
        WHERE id = ? AND situacao = 'pendente' AND tentativas = ?`,
      { replacements: [dataSql(ate), ...(primeira ? [dataSql(new Date())] : []), e.id, e.tentativas] },
    );
    return { ate: ate.getTime() };
  }
  vez.emCurso++;
  let enviado: { iniciadaEm: Date; r: ResultadoDoEnvio } | null;
  try {
    enviado = await enviarAssinada(e, assinantes, sinal);
    // an answer, or the time-out, counts (vezDe); a shutdown's cut does not
    if (enviado && !enviado.r.interrompido) vez.duracaoMs += (enviado.r.duracaoMs - vez.duracaoMs) / Math.min(++vez.medidas, 5);
  } finally {
    vez.emCurso--;
    // an idle subscription that answers fast has nothing worth keeping: a worker running for
    // months sees subscriptions come and go, and only the slow ones' averages matter
    if (vez.emCurso === 0 && vez.duracaoMs < LENTA_A_PARTIR_DE_MS) vezes.delete(e.assinatura_id);
  }
  if (!enviado) return null;
  const { iniciadaEm, r } = enviado;
  // cut by the shutdown, past its grace: not the subscriber's failure, and not recorded; the job's
  // next run makes it again (the subscriber may have had it: at least once)
  if (r.interrompido) return null;
  const numero = e.tentativas + 1;
  const agora = new Date();
  const ultimoErro = r.erro?.slice(0, 1000) ?? null;
  const tentativa: LinhaDaTentativa = [e.id, numero, dataSql(iniciadaEm), r.duracaoMs, r.status, ultimoErro, r.resposta];
  // the attempt and the delivery's new state in one commit; a success is recorded even if the
  // subscription was deactivated meanwhile (the subscriber has it), a failure leaves a delivery
  // cancelled meanwhile alone (SPEC §6 rule 6)
  if (!r.erro) {
    await sucessos.guardar({ tentativa, entregueEm: dataSql(agora) });
    return 'entregue';
  }
  const falha = new FalhaDeTentativa(r.erro, r.retryAfterMs);
  const esgotou = numero >= e.maximo_de_tentativas;
  const situacao: SituacaoDaEntrega = esgotou ? 'fila_de_erro' : 'pendente';
  falha.atrasoMs = atrasoDaProximaTentativa(numero, undefined, falha);
  // from the moment recorded as the attempt's end (atualizada_em): the stored wait is the queue's own
  const proxima = esgotou ? null : new Date(agora.getTime() + falha.atrasoMs);
  let seguiaPendente: number;
  try {
    [, seguiaPendente] = await escreverJuntos(banco('hub'), [
      [`INSERT INTO ${TENTATIVA_DE_ENTREGA} VALUES (?, ?, ?, ?, ?, ?, ?)`, tentativa],
      [
        // and still in the round it was read in: a job run twice (its lock lost) must not write over
        // a replay's new round, pushing it to the error queue or delaying it
        `UPDATE entrega SET situacao = ?, tentativas = ?, entregue_em = NULL, proxima_tentativa_em = ?, ultimo_erro = ?, atualizada_em = ?
          WHERE id = ? AND situacao = 'pendente' AND tentativas = ?`,
        [situacao, numero, proxima && dataSql(proxima), ultimoErro, dataSql(agora), e.id, e.tentativas],
      ],
    ]);
  } catch (err) {
    // the request went out and failed, but the database took no record of it: the retry still
    // waits for the schedule (a batch run again leaves it to its job: entregarLote). Thrown as any
    // other error, it would run again within seconds (the short wait of an error before any
    // attempt), calling a failing subscriber every few seconds
    log.error({ erro: (err as Error).message, entrega_id: e.id }, 'tentativa falha não registrada: a próxima espera a agenda');
    throw falha;
  }
  // cancelled meanwhile, or another round under way: nothing more for this job to do
  if (!seguiaPendente) return 'cancelada';
  if (esgotou) return 'fila_de_erro';
  throw falha;
}

/** The delivery's request, signed and sent; null when shutdown came before it could leave. */
async function enviarAssinada(
  e: LinhaDaEntrega,
  assinantes: Awaited<ReturnType<typeof chavesQueAssinam>>,
  sinal?: AbortSignal,
): Promise<{ iniciadaEm: Date; r: ResultadoDoEnvio } | null> {
  const audiencia = e.assinante_no_auth;
  const envelope = JSON.stringify({
    id: e.evento_id,
    tipo: e.tipo,
    versao: e.versao,
    aplicativo_origem_id: e.origem_no_auth,
    aplicativo_assinante_id: audiencia,
    criado_em: iso(e.evento_criado_em),
  });
  // `dados` is stored as JSON text: spliced in as it is, never parsed and written again
  const corpo = `${envelope.slice(0, -1)},"dados":${e.dados}}`;
  const cabecalhos = await assinarEntrega(
    { webhookId: e.id, corpo, audiencia, assinaturaId: e.assinatura_id, tipo: e.tipo, versao: e.versao },
    assinantes,
  );
  // shutdown may have come while the keys or the row were read: the request has not left yet
  if (sinal?.aborted) return null;
  const iniciadaEm = new Date();
  return { iniciadaEm, r: await enviarPost(e.url_de_destino, corpo, { ...cabecalhos }, e.tempo_limite_em_segundos * 1000) };
}

interface LinhaDaEntrega {
  id: string;
  situacao: SituacaoDaEntrega;
  tentativas: number;
  evento_id: string;
  versao: number;
  dados: string;
  evento_criado_em: Date;
  /** the applications' ids in identity: the envelope's and the token's audience */
  origem_no_auth: string;
  assinatura_id: string;
  assinante_no_auth: string;
  /** 0 once the subscriber left identity: it receives nothing */
  assinante_ativo: number;
  url_de_destino: string;
  maximo_de_tentativas: number;
  tempo_limite_em_segundos: number;
  ativa: number;
  deletada_em: Date | null;
  tipo: string;
  proxima_tentativa_em: Date | null;
  ultimo_erro: string | null;
  /** 1 while nothing but its creation wrote the row: no replay or sweep gave it a job of its own */
  intocada: number;
}

/**
 * The subscription `a` takes deliveries and its subscriber `s` is active (an application that left
 * identity receives nothing): read by a publication before its batch's transaction and again in it.
 */
export const ASSINATURA_RECEBE = 'a.ativa = 1 AND a.deletada_em IS NULL AND s.ativo = 1';

/** Pending deliveries cancelled per statement of `cancelarPendentesEmPaginas`. */
export const CANCELADAS_POR_VEZ = { maximo: 1000 };

/**
 * SPEC §6 rule 6: the pending deliveries of a subscription that no longer receives (deactivated,
 * deleted, or its subscriber made inactive by the sync, docs/decisoes.md) stop at once. Run once
 * that change has committed, a page at a time, each page in a short transaction of its own: the
 * change's transaction holds the subscription's (or the application's) row, which every
 * publication of its type reads FOR SHARE, and cancelling a backlog there (200,000 pending took
 * 7.7 s) held every publication batch with that type for as long. From the commit on, a
 * publication stores its delivery cancelled and a worker cancels a pending one it picks up, so
 * nothing more is sent meanwhile.
 * Each page reads the subscription and its subscriber FOR SHARE and stops once it receives again:
 * a reactivation (under the row's lock, so never in the middle of a page) cancels what is left
 * itself (`cancelarPendentes`), and what it lets through afterwards is not this cancellation's.
 * Every page is stamped with one moment, answered for `removerJobs`; null when none was cancelled.
 * A failure midway (the database) is logged, not thrown: the change it follows has committed, and
 * the deliveries it left pending are cancelled by their attempts, or by a reactivation, never sent.
 */
export async function cancelarPendentesEmPaginas(assinaturaId: string): Promise<Date | null> {
  const momento = new Date();
  let canceladas = 0;
  try {
    for (;;) {
      const naPagina = await repetirEmConflito('cancelamento de entregas pendentes', () =>
        banco('hub').transaction(LEITURA_CONFIRMADA, async (transaction) => {
          const [aindaParada] = await banco('hub').query(
            `SELECT a.id FROM assinatura a JOIN aplicativo s ON s.id = a.aplicativo_assinante_id
              WHERE a.id = ? AND NOT (${ASSINATURA_RECEBE}) LOCK IN SHARE MODE`,
            { replacements: [assinaturaId], type: QueryTypes.SELECT, transaction },
          );
          if (!aindaParada) return 0;
          const [n] = await Entrega.update(
            { situacao: 'cancelada', proxima_tentativa_em: null, atualizada_em: momento },
            { where: { assinatura_id: assinaturaId, situacao: 'pendente' }, limit: CANCELADAS_POR_VEZ.maximo, transaction, silent: true },
          );
          return n;
        }),
      );
      canceladas += naPagina;
      if (naPagina < CANCELADAS_POR_VEZ.maximo) break;
    }
  } catch (err) {
    log.error({ erro: (err as Error).message, assinatura_id: assinaturaId, canceladas }, 'cancelamento de entregas pendentes interrompido: as restantes se cancelam na vez de cada uma');
  }
  return canceladas ? momento : null;
}

/**
 * Inside the transaction that makes a subscription (or its subscriber) receive again, under its
 * row's lock: any delivery still pending was stored before it stopped receiving (since then they
 * are stored cancelled) and was left by a cancellation cut short (a process stopped midway) or
 * still running; cancelled here, none of them reaches the subscriber. Usually none; one statement.
 */
export async function cancelarPendentes(assinaturaId: string, transaction: Transaction): Promise<Date | null> {
  const momento = new Date();
  const [canceladas] = await Entrega.update(
    { situacao: 'cancelada', proxima_tentativa_em: null, atualizada_em: momento },
    { where: { assinatura_id: assinaturaId, situacao: 'pendente' }, transaction, silent: true },
  );
  return canceladas ? momento : null;
}

/**
 * The ids of a subscription's deliveries in `situacao` (stamped `em`, their `atualizada_em`, by one
 * change of them all, when given), handed to `fazer` a page at a time in the order of the
 * subscription's index (creation, then id), so memory stays flat whatever their number; `fazer`
 * answering false stops it. One changed again since the stamp (attempted meanwhile) is left out,
 * and so is one created at the stamp: a publication of that millisecond, which a replay did not
 * make pending (it queued it beside its own batch job, and it was sent twice); one a cancellation
 * of that millisecond caught keeps its job, which finds it cancelled.
 */
async function emPaginas(
  assinaturaId: string,
  situacao: SituacaoDaEntrega,
  em: Date | null,
  tamanho: number,
  fazer: (ids: string[]) => Promise<boolean | void>,
): Promise<void> {
  let depois = { criada_em: '0001-01-01', id: '' };
  for (;;) {
    const pagina = await lerLinhas<{ id: string; criada_em: string }>(
      banco('hub'),
      `SELECT id, DATE_FORMAT(criada_em, '%Y-%m-%d %H:%i:%s.%f') AS criada_em FROM entrega
        WHERE assinatura_id = ? AND situacao = ? AND (criada_em > ? OR (criada_em = ? AND id > ?))${em ? ' AND atualizada_em = ? AND criada_em < ?' : ''}
        ORDER BY criada_em, id LIMIT ${Number(tamanho)}`,
      [assinaturaId, situacao, depois.criada_em, depois.criada_em, depois.id, ...(em ? [dataSql(em), dataSql(em)] : [])],
    );
    if (!pagina.length || (await fazer(pagina.map((e) => e.id))) === false) return;
    depois = pagina[pagina.length - 1];
  }
}

/**
 * The jobs of the deliveries a cancellation stamped `canceladasEm` would find them cancelled anyway:
 * removing them frees Redis of waiting retries.
 */
export async function removerJobs(assinaturaId: string, canceladasEm: Date | null, tamanhoDaPagina = 1000): Promise<void> {
  if (!canceladasEm) return;
  const q = fila(filaHubEntrega);
  try {
    await emPaginas(assinaturaId, 'cancelada', canceladasEm, tamanhoDaPagina, async (ids) => {
      for (let i = 0; i < ids.length; i += 100) await Promise.all(ids.slice(i, i + 100).map((id) => q.remove(id).catch(() => 0)));
    });
  } catch (err) {
    log.warn({ erro: (err as Error).message, assinatura_id: assinaturaId }, 'jobs de entregas canceladas não removidos');
  }
}

/**
 * Late deliveries read per sweep run, at most, to find `limite` to move: the ones a queued batch
 * still holds are passed over (a backlog), and the ones behind them must still be reached.
 */
const LEITURA_DA_VARREDURA = 10;

/** A place in the late deliveries' index order (`entrega_atrasada`: next attempt, then id). */
interface Posicao {
  em: string;
  id: string;
}

interface Candidata extends Posicao {
  lote: string | null;
  do_lote: number;
}

/**
 * Where the last run of this process stopped reading (each process keeps its own; a restart starts
 * from the most overdue): the next one goes on from there, round to the start and back. Without
 * it every run read the same most overdue rows again, a backlog's (50,000 of them every minute),
 * and never reached a forgotten delivery behind them while the backlog lasted.
 */
let retomarDe: Posicao | null = null;

/**
 * Late pending deliveries after `depois` and up to `ate` (inclusive), in the index's order. The
 * event's batch (`lote`) matters only to a delivery never tried nor touched: the others' events,
 * most of a backlog once tried, are not read.
 */
function lerAtrasadas(atraso: string, depois: Posicao | null, ate: Posicao | null, n: number): Promise<Candidata[]> {
  const depoisSql = depois ? ' AND (e.proxima_tentativa_em > ? OR (e.proxima_tentativa_em = ? AND e.id > ?))' : '';
  const ateSql = ate ? ' AND (e.proxima_tentativa_em < ? OR (e.proxima_tentativa_em = ? AND e.id <= ?))' : '';
  return lerPorTexto<Candidata>(
    banco('hub'),
    `SELECT e.id, DATE_FORMAT(e.proxima_tentativa_em, '%Y-%m-%d %H:%i:%s.%f') AS em, ev.lote,
            e.tentativas = 0 AND e.atualizada_em = e.criada_em AS do_lote
       FROM entrega e
       LEFT JOIN evento ev ON ev.id = e.evento_id AND e.tentativas = 0 AND e.atualizada_em = e.criada_em
      WHERE e.situacao = 'pendente' AND e.proxima_tentativa_em < ?${depoisSql}${ateSql}
      ORDER BY e.proxima_tentativa_em, e.id LIMIT ${Math.trunc(n)}`,
    [atraso, ...(depois ? [depois.em, depois.em, depois.id] : []), ...(ate ? [ate.em, ate.em, ate.id] : [])],
  );
}

/**
 * Deliveries still pending whose job is gone (Redis lost it, or it was never added) go back to the
 * queue, each with a job of its own, `limite` per run. One never tried nor touched since it was
 * published is left alone while the batch job that carries its first attempt (its event's `lote`)
 * still exists: a backlog over two minutes long is not given a second job beside the batch. The
 * ones taken get their next attempt set to now, which also marks them touched (a batch that still
 * held them leaves them to their own job). Up to limite × LEITURA_DA_VARREDURA late ones are read
 * per run in the order of the `entrega_atrasada` index (only late ones are read, no sort), from
 * where the last run stopped to the end, then from the start back to there: a backlog is read
 * once per round, not once a minute.
 */
export async function reenfileirarEsquecidas(limite = 5000): Promise<number> {
  const atraso = dataSql(new Date(Date.now() - 120_000));
  const leitura = Math.trunc(limite * LEITURA_DA_VARREDURA);
  const inicio = retomarDe;
  const candidatas = await lerAtrasadas(atraso, inicio, null, leitura);
  if (inicio && candidatas.length < leitura) candidatas.push(...(await lerAtrasadas(atraso, null, inicio, leitura - candidatas.length)));
  /** untried and untouched: its batch, if still queued, makes its first attempt */
  const doLote = (c: { lote: string | null; do_lote: number }) => Boolean(c.do_lote && c.lote);
  const naFila = async (cs: Candidata[]) => jobsNaFila([...new Set(cs.filter(doLote).map((c) => c.lote!))]);
  const vivos = await naFila(candidatas);
  const todas = candidatas.filter((c) => !(doLote(c) && vivos.has(c.lote!)));
  const escolhidas = todas.slice(0, limite);
  // where the next run reads on from
  if (todas.length > limite) retomarDe = escolhidas[limite - 1]; // more found than it may move: after the last one moved
  else if (candidatas.length === leitura) retomarDe = candidatas[leitura - 1]; // its whole budget read: after the last one read
  else retomarDe = null; // the round ended: from the start
  if (!escolhidas.length) return 0;
  const ids = escolhidas.map((c) => c.id);
  const agora = dataSql(new Date());
  // still late: an attempt that failed (or a batch that made it) since the read set its own next
  // time, which stays, and the delivery needs no job from here
  await banco('hub').query(
    `UPDATE ${POR_ID} SET proxima_tentativa_em = ?, atualizada_em = ? WHERE id IN (?) AND situacao = 'pendente' AND proxima_tentativa_em < ?`,
    { replacements: [agora, agora, ids, atraso] },
  );
  const movidas = new Set(
    (await lerPorTexto<{ id: string }>(banco('hub'), `SELECT id FROM entrega WHERE id IN (?) AND situacao = 'pendente' AND proxima_tentativa_em = ?`, [ids, agora])).map(
      (e) => e.id,
    ),
  );
  // a repeated publication may have queued the batch again meanwhile: it would send what a job of
  // its own sent too. Marked touched, the batch leaves them alone, and the next sweep gives them a job.
  const voltaram = await naFila(escolhidas.filter((c) => movidas.has(c.id)));
  const enfileirar = escolhidas.filter((c) => movidas.has(c.id) && !(doLote(c) && voltaram.has(c.lote!))).map((c) => c.id);
  await enfileirarEntregas(enfileirar);
  if (enfileirar.length) log.info({ quantidade: enfileirar.length }, 'entregas reenfileiradas');
  return enfileirar.length;
}

/** Of the delivery queue's job ids `ids` (batches' or deliveries' own), those it still holds: one round trip. */
export async function jobsNaFila(ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const q = fila(filaHubEntrega);
  const pipeline = redis('produtor').pipeline();
  for (const id of ids) pipeline.exists(q.toKey(id));
  const existe = await pipeline.exec();
  return new Set(ids.filter((_, i) => existe?.[i]?.[1] === 1));
}

export interface EntregaJson {
  id: string;
  evento_id: string;
  assinatura_id: string;
  situacao: SituacaoDaEntrega;
  tentativas: number;
  proxima_tentativa_em: string | null;
  entregue_em: string | null;
  ultimo_erro: string | null;
  criada_em: string;
  atualizada_em: string;
}

const entregaJson = (e: Entrega): EntregaJson => ({
  id: e.id,
  evento_id: e.evento_id,
  assinatura_id: e.assinatura_id,
  situacao: e.situacao,
  tentativas: e.tentativas,
  proxima_tentativa_em: iso(e.proxima_tentativa_em),
  entregue_em: iso(e.entregue_em),
  ultimo_erro: e.ultimo_erro,
  criada_em: iso(e.criada_em)!,
  atualizada_em: iso(e.atualizada_em)!,
});

/**
 * A page's `total` counts up to this many deliveries; past it the count stops there and `estimado`
 * says so. The history holds every delivery of the retention period (millions): an exact count
 * read them all on every page (1.6 s for two million).
 */
export const CONTAGEM_DAS_ENTREGAS = { maxima: 10_000 };

export async function listarEntregas(
  f: { assinatura_id?: string; situacao?: SituacaoDaEntrega },
  pagina: number,
  tamanho: number,
): Promise<PaginaNumerada<EntregaJson> & { estimado: boolean }> {
  // only the filters given: an empty one is no condition
  const filtro: FiltroDeEntregas = {
    ...(f.assinatura_id && { assinatura_id: f.assinatura_id }),
    ...(f.situacao && { situacao: f.situacao }),
  };
  const maxima = CONTAGEM_DAS_ENTREGAS.maxima;
  // a page starts within the deliveries a count reaches: a deeper one would make the database
  // walk the whole history to its offset (any user who reads deliveries could ask for page 2^53)
  const inicio = offset(pagina, tamanho);
  const [ids, [{ n }]] = await Promise.all([
    inicio < maxima ? idsDaPagina(filtro, inicio, tamanho) : [],
    lerDemorado<{ n: number | string }>(
      banco('hub'),
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM entrega ${condicoesDe(filtro)} LIMIT ${maxima + 1}) t`,
      Object.values(filtro),
    ),
  ]);
  const total = Math.min(Number(n), maxima);
  const linhas = ids.length ? await Entrega.findAll({ where: { id: ids } }) : [];
  const porId = new Map(linhas.map((e) => [e.id, e]));
  // a delivery purged between the two reads is left out of its page
  const itens = ids.flatMap((id) => porId.get(id) ?? []).map(entregaJson);
  // past the count, the page is empty (a deeper one, read whole, is not shown either)
  return { itens: inicio < total ? itens : [], pagina, tamanho, total, estimado: Number(n) > maxima };
}

type FiltroDeEntregas = { assinatura_id?: string; situacao?: SituacaoDaEntrega };

const condicoesDe = (filtro: FiltroDeEntregas) => {
  const condicoes = Object.keys(filtro).map((coluna) => `${coluna} = ?`);
  return condicoes.length ? `WHERE ${condicoes.join(' AND ')}` : '';
};

/**
 * The ids of a page, newest first, read from an index alone; its rows are read after, by id
 * (reading whole rows to skip the earlier pages cost up to a second on a deep page of a cold
 * history). A subscription's deliveries in every situation are the newest of each situation merged:
 * its index is (assinatura_id, situacao, criada_em), which orders one situation at a time, and
 * sorting them all cost seconds for a subscription holding a few percent of two million deliveries
 * (docs/desempenho.md).
 */
async function idsDaPagina(filtro: FiltroDeEntregas, inicio: number, tamanho: number): Promise<string[]> {
  const ordem = 'ORDER BY criada_em DESC, id DESC';
  // as text (the page's LIMIT makes each text its own, and prepared ones would stay on the server),
  // on the pool of the reads that may take long: a burst of pages never holds the lookups by id up
  const ler = async (sql: string, parametros: unknown[]) =>
    (await lerDemorado<{ id: string }>(banco('hub'), sql, parametros)).map((l) => l.id);
  if (filtro.assinatura_id && !filtro.situacao) {
    const porSituacao = `(SELECT id, criada_em FROM entrega WHERE assinatura_id = ? AND situacao = ? ${ordem} LIMIT ${inicio + tamanho})`;
    return ler(
      `SELECT id FROM (${SITUACOES_DA_ENTREGA.map(() => porSituacao).join(' UNION ALL ')}) u ${ordem} LIMIT ${inicio}, ${tamanho}`,
      SITUACOES_DA_ENTREGA.flatMap((situacao) => [filtro.assinatura_id, situacao]),
    );
  }
  return ler(`SELECT id FROM entrega ${condicoesDe(filtro)} ${ordem} LIMIT ${inicio}, ${tamanho}`, Object.values(filtro));
}

export async function entregaPorId(id: string) {
  const e = await Entrega.findByPk(id, { include: [{ model: Evento, as: 'evento' }] });
  if (!e) throw naoEncontrado('Entrega');
  const historico = await TentativaDeEntrega.findAll({ where: { entrega_id: id }, order: [['id', 'ASC']] });
  return {
    ...entregaJson(e),
    evento: e.evento ? { id: e.evento.id, versao: e.evento.versao, dados: e.evento.dados, criado_em: iso(e.evento.criado_em) } : null,
    historico: historico.map((t) => ({
      numero: t.numero,
      iniciada_em: iso(t.iniciada_em),
      duracao_ms: t.duracao_ms,
      status_http: t.status_http,
      erro: t.erro,
      resposta: t.resposta,
    })),
  };
}

/**
 * `ultima_entrega_em` is read from the delivered deliveries: before some of them stop counting
 * (replayed, or purged), the subscription keeps their last success in its own column. Read
 * (ultimasEntregas) apart from written (gravarUltimasEntregas), so a purge locks the subscriptions'
 * rows only once its batch is deleted, right before its commit: publications read them with a
 * shared lock, and waited for the whole batch.
 */
async function guardarUltimaEntrega(ids: string[], transaction?: Transaction): Promise<void> {
  await gravarUltimasEntregas(await ultimasEntregas(ids, transaction), transaction);
}

interface UltimaEntrega {
  assinatura_id: string;
  ultima: Date;
}

function ultimasEntregas(ids: string[], transaction?: Transaction): Promise<UltimaEntrega[]> {
  return banco('hub').query(
    `SELECT assinatura_id, MAX(entregue_em) AS ultima FROM entrega WHERE id IN (?) AND situacao = 'entregue' GROUP BY assinatura_id`,
    { replacements: [ids], transaction, type: QueryTypes.SELECT },
  );
}

async function gravarUltimasEntregas(ultimas: UltimaEntrega[], transaction?: Transaction): Promise<void> {
  if (!ultimas.length) return;
  const ordenadas = [...ultimas].sort((a, b) => (a.assinatura_id < b.assinatura_id ? -1 : 1));
  const ultima = valorPorId(ordenadas, (u) => u.assinatura_id, (u) => dataSql(u.ultima), 'DATETIME(3)');
  await banco('hub').query(
    `UPDATE assinatura SET ultima_entrega_em = GREATEST(COALESCE(ultima_entrega_em, ${ultima.sql}), ${ultima.sql}) WHERE id IN (?)`,
    { replacements: [...ultima.parametros, ...ultima.parametros, ordenadas.map((u) => u.assinatura_id)], transaction },
  );
}

/** Of `ids`, those still in one of `situacoes` (and unchanged since `antesDe`), read again and locked until `transaction` ends. */
async function travarNaSituacao(ids: string[], situacoes: SituacaoDaEntrega[], transaction: Transaction, antesDe?: Date): Promise<string[]> {
  const where: WhereOptions = { id: ids, situacao: situacoes, ...(antesDe && { atualizada_em: { [Op.lt]: antesDe } }) };
  const linhas = await Entrega.findAll({
    where,
    attributes: ['id'],
    lock: transaction.LOCK.UPDATE,
    transaction,
    indexHints: [{ type: IndexHints.FORCE, values: ['PRIMARY'] }],
  });
  return linhas.map((e) => e.id);
}

/**
 * Replay of one delivery: in the error queue or delivered, it starts a new round of attempts. Read
 * again under lock, so one purged, replayed by someone else or delivered meanwhile is left alone;
 * answers whether it did start again. Its subscription and subscriber are locked first
 * (motivoDeNaoReceber), as deactivating either takes it before the deliveries: one deactivated since it
 * was read gets nothing pending. Deadlocks with a purge batch (which locks deliveries first) are
 * retried.
 */
async function reenviar(entrega: Entrega): Promise<boolean> {
  const reenviada = await repetirEmConflito('reenvio de entrega', () =>
    banco('hub').transaction(async (transaction) => {
      // FOR UPDATE, not SHARE: keeping the last success (guardarUltimaEntrega) writes this row, and two
      // replays sharing the lock would deadlock as each upgraded it
      if (await motivoDeNaoReceber(entrega.assinatura_id, { transaction, lock: transaction.LOCK.UPDATE })) return false;
      const elegiveis = await travarNaSituacao([entrega.id], ['entregue', 'fila_de_erro'], transaction);
      if (!elegiveis.length) return false;
      await guardarUltimaEntrega(elegiveis, transaction);
      const agora = dataSql(new Date());
      await banco('hub').query(
        `UPDATE ${POR_ID} SET situacao = 'pendente', tentativas = 0, entregue_em = NULL, proxima_tentativa_em = ?, ultimo_erro = NULL, atualizada_em = ? WHERE id IN (?)`,
        { replacements: [agora, agora, elegiveis], transaction },
      );
      return true;
    }),
  );
  if (!reenviada) return false;
  // the new round is committed: Redis out of reach leaves its job to the sweep (reenfileirarEsquecidas),
  // as a mass replay does, rather than a 503 for a replay that did happen (a retry would get a 409)
  await enfileirarDeNovo([entrega.id]).catch((err: unknown) =>
    log.warn({ erro: (err as Error).message, entrega_id: entrega.id }, 'reenvio: entrega não enfileirada; fica para a varredura'),
  );
  return true;
}

/**
 * The jobs of deliveries a replay made pending again: a finished job of the same id may still be
 * kept (removed, so the new one is accepted), and one of the old round still finishing is waited for.
 */
async function enfileirarDeNovo(ids: string[]): Promise<void> {
  const q = fila(filaHubEntrega);
  const desde = Date.now();
  await Promise.all(ids.map((id) => q.remove(id).catch(() => 0)));
  await enfileirarEntregas(ids);
  await substituirJobsAnteriores(ids, desde);
}

/** How long a replay waits for jobs of the old round still finishing before leaving them to the sweep. */
const ESPERA_DO_JOB_ANTERIOR_MS = 5000;

/**
 * A delivery's job id is its own id, and BullMQ ignores an add while a job of that id exists. The
 * old round's job stays active for a moment after recording its last attempt (which the replay
 * read as finished), and it cannot be removed meanwhile: the replay's add is then lost, and the
 * delivery waited for the sweep. So the ids whose job is still one from before `desde` are
 * watched until it is gone, then queued again, unless a job ran the new round meanwhile (the
 * delivery is no longer pending and untried).
 */
async function substituirJobsAnteriores(ids: string[], desde: number): Promise<void> {
  const q = fila(filaHubEntrega);
  const limite = Date.now() + ESPERA_DO_JOB_ANTERIOR_MS;
  let vigiados = ids;
  for (;;) {
    const jobs = await Promise.all(vigiados.map((id) => q.getJob(id)));
    const semJob = vigiados.filter((_, i) => !jobs[i]);
    const anteriores = vigiados.filter((_, i) => jobs[i] && jobs[i].timestamp < desde);
    if (semJob.length) {
      const intocadas = await Entrega.findAll({ where: { id: semJob, situacao: 'pendente', tentativas: 0 }, attributes: ['id'] });
      await enfileirarEntregas(intocadas.map((e) => e.id));
    }
    const ativos: string[] = [];
    // an old job still waiting or delayed runs the new round itself; one finished and kept is
    // removed, and one gone since it was read (removed on completion) is looked at again on the
    // next turn, where it is queued again unless it ran the new round
    for (const id of anteriores) {
      const estado = await q.getJobState(id);
      if (estado === 'completed' || estado === 'failed') await q.remove(id).catch(() => 0);
      if (estado === 'active' || estado === 'completed' || estado === 'failed' || estado === 'unknown') ativos.push(id);
    }
    if (!ativos.length) return;
    if (Date.now() > limite) {
      log.warn({ entregas: ativos.length }, 'reenvio: jobs anteriores ainda ativos; as entregas ficam para a varredura');
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
    vigiados = ativos;
  }
}

/**
 * Why a subscription takes no delivery now, if it does not: it is inactive or removed, or its
 * subscriber is inactive (an application that left identity receives nothing). `sob` reads the
 * subscription under that lock and its subscriber FOR SHARE: deactivating a subscription, and the
 * sync making an application inactive, lock that row before cancelling the pending deliveries, so
 * a replay either commits first (and its deliveries are cancelled with the rest) or sees the change.
 */
async function motivoDeNaoReceber(assinaturaId: string, sob?: { transaction: Transaction; lock: LOCK }) {
  const a = await Assinatura.findByPk(assinaturaId, { attributes: ['id', 'ativa', 'aplicativo_assinante_id'], ...sob });
  if (!a?.ativa) return 'assinatura';
  const assinante = await Aplicativo.findByPk(a.aplicativo_assinante_id, {
    attributes: ['id', 'ativo'],
    ...(sob && { transaction: sob.transaction, lock: sob.transaction.LOCK.SHARE }),
  });
  return assinante?.ativo ? null : 'assinante';
}

async function conferirQueRecebe(id: string): Promise<void> {
  const motivo = await motivoDeNaoReceber(id);
  if (motivo === 'assinatura') throw conflito('A assinatura está inativa ou foi removida: reative-a antes de reenviar.');
  if (motivo === 'assinante') throw conflito('O aplicativo assinante está inativo no hub (saiu do identity): nada é reenviado a ele.');
}

export async function reenviarEntrega(id: string): Promise<EntregaJson> {
  const e = await Entrega.findByPk(id);
  if (!e) throw naoEncontrado('Entrega');
  if (e.situacao === 'pendente') throw conflito('A entrega ainda está pendente.');
  if (e.situacao === 'cancelada') throw conflito('A entrega foi cancelada com a assinatura ou com o aplicativo assinante.');
  await conferirQueRecebe(e.assinatura_id);
  if (!(await reenviar(e))) {
    // changed since it was read: its subscription or subscriber deactivated, the delivery purged, or already sent again by someone else
    await conferirQueRecebe(e.assinatura_id);
    const atual = await Entrega.findByPk(id);
    if (!atual) throw naoEncontrado('Entrega');
    throw conflito('A entrega mudou enquanto era reenviada; consulte-a de novo.');
  }
  await e.reload();
  return entregaJson(e);
}

/**
 * The error queue of a subscription starts a new round, a page at a time: each page's ids are
 * read, then changed by id in a transaction that first holds the subscription and its subscriber
 * FOR SHARE (as deactivating either takes it before the deliveries: none of a subscription
 * deactivated meanwhile, or of an application the sync made inactive meanwhile, becomes pending
 * again, and the rest of the error queue stays as it is). Locking each delivery by id, as a
 * replay of one delivery does, and not through the subscription's index, two replays wait on each
 * other instead of deadlocking; one replayed alone and delivered meanwhile is not sent a third
 * time. The answer does not wait for the jobs, queued afterwards a page at a time (should that stop
 * midway, the sweep queues the rest two minutes later): queuing 20,000 in the request took 10 s.
 */
export async function reenviarFalhas(assinaturaId: string, tamanhoDaPagina = 5000): Promise<{ reenviadas: number }> {
  if (!(await Assinatura.findByPk(assinaturaId, { attributes: ['id'] }))) throw naoEncontrado('Assinatura');
  await conferirQueRecebe(assinaturaId);
  const momento = new Date();
  let reenviadas = 0;
  try {
    await emPaginas(assinaturaId, 'fila_de_erro', null, tamanhoDaPagina, async (ids) => {
      // the retention purge locks deliveries, then their subscription: the opposite order, so one of
      // the two may be chosen to lose, and is run again
      const n = await repetirEmConflito('reenvio das falhas', () => banco('hub').transaction(async (transaction) => {
        if (await motivoDeNaoReceber(assinaturaId, { transaction, lock: transaction.LOCK.SHARE })) return null;
        const [, alteradas] = (await banco('hub').query(
          `UPDATE ${POR_ID} SET situacao = 'pendente', tentativas = 0, proxima_tentativa_em = ?, ultimo_erro = NULL, atualizada_em = ?
            WHERE id IN (?) AND situacao = 'fila_de_erro'`,
          { replacements: [dataSql(momento), dataSql(momento), ids], transaction, type: QueryTypes.UPDATE },
        )) as unknown as [unknown, number];
        return alteradas;
      }));
      if (n === null) return false;
      reenviadas += n;
    });
  } finally {
    // a page that failed (503) leaves the pages before it committed: their jobs go all the same,
    // rather than wait minutes for the sweep (a retry takes only what is still in the error queue)
    if (reenviadas) emSegundoPlano(enfileirarReenviadas(assinaturaId, momento, tamanhoDaPagina));
  }
  return { reenviadas };
}

async function enfileirarReenviadas(assinaturaId: string, em: Date, tamanhoDaPagina: number): Promise<void> {
  try {
    await emPaginas(assinaturaId, 'pendente', em, tamanhoDaPagina, enfileirarDeNovo);
  } catch (err) {
    log.warn({ erro: (err as Error).message, assinatura_id: assinaturaId }, 'reenvio: entregas não enfileiradas; ficam para a varredura');
  }
}

/**
 * Retention (DESIGN §5): deliveries finished more than `dias` ago (their last change: a replayed
 * one counts from its new end, not from its creation), their attempts, and events older than that
 * with no delivery left, in batches.
 */
export interface ResultadoDaPurga {
  entregas: number;
  eventos: number;
  /** stopped at a batch's end by `sinal` (shutdown): the next purge goes on from there */
  interrompida?: true;
}

/**
 * `aoProgredir` hears the counts after each batch (the dashboard shows them); `sinal` (shutdown)
 * stops the purge between batches.
 */
export async function purgarHistorico(
  dias: number,
  { aoProgredir, sinal }: { aoProgredir?: (r: ResultadoDaPurga) => void; sinal?: AbortSignal } = {},
): Promise<ResultadoDaPurga> {
  const limite = new Date(Date.now() - dias * 86_400_000);
  let entregas = 0;
  let eventos = 0;
  const parar = () => sinal?.aborted === true;
  // walked by creation (indexed; a delivery ends after it was created) from where the last batch
  // stopped, so the recently finished ones passed over are not read again
  let depois: { criada_em: Date; id: string } | null = null;
  for (;;) {
    if (parar()) return { entregas, eventos, interrompida: true };
    const velhas: Entrega[] = await Entrega.findAll({
      where: {
        criada_em: { [Op.lt]: limite },
        atualizada_em: { [Op.lt]: limite },
        situacao: { [Op.ne]: 'pendente' },
        ...(depois && {
          [Op.or]: [{ criada_em: { [Op.gt]: depois.criada_em } }, { criada_em: depois.criada_em, id: { [Op.gt]: depois.id } }],
        }),
      },
      attributes: ['id', 'criada_em'],
      order: [
        ['criada_em', 'ASC'],
        ['id', 'ASC'],
      ],
      limit: 5000,
    });
    if (!velhas.length) break;
    const ultima = velhas[velhas.length - 1];
    depois = { criada_em: ultima.criada_em, id: ultima.id };
    entregas += await repetirEmConflito('purga do histórico', () =>
      banco('hub').transaction(async (transaction) => {
        // read again under lock: one replayed since (pending again, its job queued) stays, and one
        // delivered meanwhile has its success kept
        const ids = await travarNaSituacao(velhas.map((e) => e.id), ['entregue', 'fila_de_erro', 'cancelada'], transaction, limite);
        if (!ids.length) return 0;
        const ultimas = await ultimasEntregas(ids, transaction);
        await TentativaDeEntrega.destroy({ where: { entrega_id: ids }, transaction });
        const apagadas = await Entrega.destroy({ where: { id: ids }, transaction });
        // last: the subscriptions' rows stay locked only to the commit (guardarUltimaEntrega)
        await gravarUltimasEntregas(ultimas, transaction);
        return apagadas;
      }),
    );
    aoProgredir?.({ entregas, eventos });
  }
  // events go once none of their deliveries is left; walked in id order so kept ones are passed over
  let depoisDe = '';
  for (;;) {
    if (parar()) return { entregas, eventos, interrompida: true };
    const velhos = await Evento.findAll({
      where: { criado_em: { [Op.lt]: limite }, id: { [Op.gt]: depoisDe } },
      attributes: ['id'],
      order: [['id', 'ASC']],
      limit: 5000,
    });
    if (!velhos.length) break;
    depoisDe = velhos[velhos.length - 1].id;
    // one row per event, not per delivery left (an event of many subscriptions held back)
    const comEntregas = new Set(
      (await Entrega.findAll({ where: { evento_id: velhos.map((e) => e.id) }, attributes: ['evento_id'], group: ['evento_id'] })).map((e) => e.evento_id),
    );
    const ids = velhos.map((e) => e.id).filter((id) => !comEntregas.has(id));
    if (ids.length) eventos += await Evento.destroy({ where: { id: ids } });
    aoProgredir?.({ entregas, eventos });
  }
  return { entregas, eventos };
}
