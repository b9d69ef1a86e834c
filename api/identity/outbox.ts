import { literal, Op, Transaction } from 'sequelize';
import { config } from '../../config';
import { CacheComPrazo } from '../../lib/cache';
import { AGORA_NO_BANCO } from '../../lib/database';
import { comCausa } from '../../lib/erros';
import { logger, umaVezPorMinutoPorChave } from '../../lib/logger';
import { dentroDe } from '../../lib/lifecycle';
import { PRAZO_DO_COMANDO_MS, redis } from '../../lib/redis';
import { largarResposta } from '../../lib/resposta';
import { Aplicativo, EventoPendente } from '../../models/identity';
import { FalhaEsperada, fila, reenfileirar } from '../../queues/fila';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { assinar } from './chaves';

export type TipoDeEventoDeColaborador = 'colaborador.criado' | 'colaborador.atualizado' | 'colaborador.removido';

const log = logger('identity-outbox');
/**
 * A refused event is published again by each of its collaborator's later events as they come up
 * (they wait behind it): said once a minute per event, with how many times it was not.
 */
const avisarRecusa = umaVezPorMinutoPorChave((outras: number, evento: EventoPendente, erro: string) =>
  log.error(
    { evento_id: evento.id, tipo: evento.tipo, colaborador_id: evento.colaborador_id, tentativas: evento.tentativas, repetidos_sem_registro: outras, erro: erro.slice(0, 1000) },
    'o hub recusa o evento: ele e os seguintes do colaborador esperam até que a causa seja corrigida',
  ),
);

/** Stores the event in the caller's transaction: it exists if and only if the change does. */
export async function registrarEvento(
  tipo: TipoDeEventoDeColaborador,
  dados: Record<string, unknown>,
  transaction: Transaction,
): Promise<string> {
  const evento = await EventoPendente.create(
    { tipo, versao: 1, dados, colaborador_id: String(dados.id), criado_em: literal(AGORA_NO_BANCO) },
    { transaction },
  );
  return evento.id;
}

const jobsDeEnvio = (ids: string[]) => ids.map((id) => ({ name: 'enviar', data: { id }, opts: { jobId: id } }));

/**
 * After commit: one job per event (jobId = event id). When Redis is down the sweep enqueues it
 * later; waited for a few seconds at most (a queue first used while Redis is away waits for it
 * without limit: `unlock-login`, which lifts a lock without Redis, would hang on its event).
 */
export async function enfileirar(ids: string[]): Promise<void> {
  if (!ids.length) return;
  const envio = fila(filaIdentityOutbox)
    .addBulk(jobsDeEnvio(ids))
    .catch((err: Error) => log.warn({ erro: err.message, eventos: ids }, 'eventos ficam para a varredura'));
  if (!(await dentroDe(envio, PRAZO_DO_COMANDO_MS))) log.warn({ eventos: ids }, 'fila sem resposta: eventos ficam para a varredura');
}

/** The sweep checks this many events a run (a job state read in Redis each). */
const VARRIDOS_POR_VEZ = 1000;

/**
 * Where the sweep's last run stopped (a `sequencia`), kept in Redis beside the queue: any worker
 * process may run the next one. Outside the queue's own keys (`<prefix>:<queue>:<job id>`). Lost
 * (Redis emptied, a day without sweeps), the walk starts over, which only repeats work.
 */
const chaveDaPosicaoDaVarredura = () => `${config().queuePrefix}:posicao-da-varredura:${filaIdentityOutbox.nome}`;

/**
 * Events stored but never enqueued (or whose job was lost) go back to the queue, 30 s after they
 * were stored by the database's clock, which also wrote their `criado_em`: by the sweeping
 * process's own, an event stored by a process whose clock ran ahead waited that much longer.
 *
 * Each run takes the next VARRIDOS_POR_VEZ unsent events in `sequencia` order after where the last
 * run stopped, and the run that reaches the end has the next one start over. Taking the oldest
 * each time, a backlog of more events than that whose jobs are retrying (a long outage of the
 * hub) was the whole of every run, and an event stored without a job (Redis down) after them
 * waited for the backlog to drain. Now every unsent event is looked at within two walks over the
 * backlog, a run a minute per VARRIDOS_POR_VEZ. The order they are enqueued in does not matter:
 * each job sends its collaborator's earlier events first (enviar).
 */
export async function varrer(): Promise<number> {
  const chave = chaveDaPosicaoDaVarredura();
  const depoisDe = Number((await redis('produtor').get(chave)) ?? 0);
  const pendentes = await EventoPendente.findAll({
    where: {
      enviado_em: null,
      sequencia: { [Op.gt]: depoisDe },
      criado_em: { [Op.lt]: literal(`${AGORA_NO_BANCO} - INTERVAL 30 SECOND`) },
    },
    attributes: ['id', 'sequencia'],
    order: [['sequencia', 'ASC']],
    limit: VARRIDOS_POR_VEZ,
  });
  // a finished job of an unsent event (failed after stalling twice) would block the add
  await reenfileirar(filaIdentityOutbox, jobsDeEnvio(pendentes.map((e) => e.id)));
  // written once the page is enqueued: a run failing midway is taken again by the next
  if (pendentes.length < VARRIDOS_POR_VEZ) await redis('produtor').del(chave);
  else await redis('produtor').set(chave, String(pendentes[pendentes.length - 1].sequencia), 'EX', 24 * 3600);
  return pendentes.length;
}

/** Sent events are deleted this many at a time: short statements, none holding the table for long. */
const APAGADOS_POR_LOTE = 1000;

export interface ResultadoDaPurgaDoOutbox {
  apagados: number;
  /** stopped between two batches by `sinal` (shutdown): the next purge goes on */
  interrompida?: true;
}

/**
 * Retention: the events the hub accepted more than `dias` ago go, in batches; each holds the whole
 * user (names, e-mails) as it was then. Unsent ones stay, whatever their age. Nothing reads a sent
 * event again: `enviar` and the sweep look for unsent ones only, and the job of a purged event
 * finds none and sends nothing, as it finds one already sent. One row stays whatever its age, the
 * table's newest (greatest `sequencia`): subscribers keep a collaborator's event of the greatest
 * `sequencia`, so the counter must never go back, and a server recomputes an auto-increment from
 * the greatest row it holds in some cases (a restart before MySQL 8 and MariaDB 10.2.4, a restore
 * of the rows alone): emptied, the table would number from 1 again. `enviado_em` is the sending
 * process's clock: its drift, minutes, is nothing against days. `aoProgredir` hears the count after
 * each batch (the dashboard shows it); `sinal` (shutdown) stops the purge between batches.
 */
export async function purgarEventosEnviados(
  dias: number,
  { aoProgredir, sinal }: { aoProgredir?: (r: ResultadoDaPurgaDoOutbox) => void; sinal?: AbortSignal } = {},
): Promise<ResultadoDaPurgaDoOutbox> {
  const limite = new Date(Date.now() - dias * 86_400_000);
  const maisNovo = await EventoPendente.max<number, EventoPendente>('sequencia');
  let apagados = 0;
  // walked by the index (enviado_em, sequencia) from where the last batch stopped: the head of the
  // range is full of rows just deleted, which the database still steps over until it cleans them up
  let depois: { enviado_em: Date; sequencia: number } | null = null;
  while (maisNovo !== null) {
    if (sinal?.aborted) {
      log.info({ apagados }, 'purga de eventos enviados interrompida; a próxima continua');
      return { apagados, interrompida: true };
    }
    const velhos: EventoPendente[] = await EventoPendente.findAll({
      where: {
        enviado_em: { [Op.lt]: limite },
        sequencia: { [Op.lt]: maisNovo },
        ...(depois && {
          [Op.or]: [{ enviado_em: { [Op.gt]: depois.enviado_em } }, { enviado_em: depois.enviado_em, sequencia: { [Op.gt]: depois.sequencia } }],
        }),
      },
      attributes: ['id', 'enviado_em', 'sequencia'],
      order: [
        ['enviado_em', 'ASC'],
        ['sequencia', 'ASC'],
      ],
      limit: APAGADOS_POR_LOTE,
    });
    if (!velhos.length) break;
    const ultimo = velhos[velhos.length - 1];
    depois = { enviado_em: ultimo.enviado_em!, sequencia: ultimo.sequencia };
    // by primary key: the rows alone are locked, not a range of the index, whose gap before the
    // first sent event is where every new (unsent) event goes
    apagados += await EventoPendente.destroy({ where: { id: velhos.map((e) => e.id), enviado_em: { [Op.lt]: limite } } });
    aoProgredir?.({ apagados });
    if (velhos.length < APAGADOS_POR_LOTE) break;
  }
  if (apagados) log.info({ apagados, dias }, 'eventos enviados apagados pela retenção');
  return { apagados };
}

/** How long the outbox's token is valid, and how long before its end it is signed again. */
const VALIDADE_DO_TOKEN_S = 300;
const RENOVAR_ANTES_MS = 60_000;
/** by identity's address and application: a token for another is never reused */
const tokens = new CacheComPrazo<string, string>(() => VALIDADE_DO_TOKEN_S * 1000 - RENOVAR_ANTES_MS, 1);

/** The next event signs a new token (the hub refused this one). */
export function esquecerTokenDoOutbox(): void {
  tokens.esquecer();
}

/**
 * The identity service's own application token, signed locally (it is the issuer), and used for
 * most of its life: a backlog drained after a hub outage read the application and signed anew for
 * each of its events.
 */
async function tokenDoIdentity(): Promise<string> {
  const clientId = config().servicos.identity.clientId;
  return tokens.obterOuCarregar(`${config().servicos.identity.url} ${clientId ?? ''}`, async () => {
    const app = await Aplicativo.findOne({ where: clientId ? { id: clientId } : { servico_da_suite: 'identity' } });
    if (!app) throw new Error('the identity service has no application of its own (IDENTITY_CLIENT_ID)');
    return assinar({ tipo: 'aplicativo', nome: app.nome }, app.id, VALIDADE_DO_TOKEN_S);
  });
}

/** Unsent events of the same collaborator older than the one a job sends are read this many at a time. */
const ANTERIORES_POR_LEITURA = 100;

/**
 * Publishes one stored event at the hub (POST /eventos, idempotent by `id`), after the unsent
 * events of the same collaborator stored before it, in the order the database stored them: each event's
 * job backs off on its own, so after an outage a collaborator's `atualizado` or `removido` would
 * otherwise reach the hub before its `criado`, and a subscriber applying them in arrival order
 * would bring a removed collaborator back. Other collaborators' events do not wait: one the hub
 * keeps refusing holds back only its own collaborator's later ones. Throws at the first event the
 * hub does not take, so the queue retries; an event already sent is not sent again (two jobs
 * sending the same older event at once send it twice, and the hub answers the second with the
 * first).
 */
export async function enviar(id: string): Promise<'enviado' | 'ja_enviado' | 'inexistente'> {
  const evento = await EventoPendente.findByPk(id);
  if (!evento) return 'inexistente';
  if (evento.enviado_em) return 'ja_enviado';
  // read again until none is left: a long outage may leave more than one read holds, and this
  // event must not pass the ones beyond it
  for (;;) {
    const anteriores = await EventoPendente.findAll({
      where: {
        colaborador_id: evento.colaborador_id,
        enviado_em: null,
        // the database's order, not criado_em (the clock of whichever identity process stored it)
        sequencia: { [Op.lt]: evento.sequencia },
      },
      order: [['sequencia', 'ASC']],
      limit: ANTERIORES_POR_LEITURA,
    });
    for (const anterior of anteriores) await publicar(anterior);
    if (anteriores.length < ANTERIORES_POR_LEITURA) break;
  }
  await publicar(evento);
  return 'enviado';
}

/**
 * The collaborator as stored with the event, and `sequencia`, its place in identity's order: a
 * later change of a collaborator always has a greater one. The hub's deliveries can reach a
 * subscriber out of order (one retried after the next went through): the subscriber keeps the
 * event of the greatest `sequencia`. `atualizado_em` cannot order them: each identity process
 * writes it by its own clock.
 */
const dadosPublicados = (evento: EventoPendente) => ({ ...evento.dados, sequencia: Number(evento.sequencia) });

/** A refusal of the event, not an outage: a 4xx, but for a time-out (408) or a rate limit (429). */
const recusaDoHub = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

async function publicar(evento: EventoPendente): Promise<void> {
  await evento.increment('tentativas');
  let erro: string;
  let token: string | undefined;
  try {
    token = await tokenDoIdentity();
    const resposta = await fetch(`${config().servicos.hub.url}/eventos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ id: evento.id, tipo: evento.tipo, versao: evento.versao, dados: dadosPublicados(evento) }),
      signal: AbortSignal.timeout(10_000),
    });
    if (resposta.ok) {
      // its body says nothing the event needs: unread, it held the connection until collected
      largarResposta(resposta);
      await evento.update({ enviado_em: new Date(), ultimo_erro: null });
      return;
    }
    // a token refused (a signing key taken out of service meanwhile): the next try signs a new one
    if (resposta.status === 401) esquecerTokenDoOutbox();
    erro = `hub answered ${resposta.status}: ${(await resposta.text()).slice(0, 500)}`;
    // retried like an outage, but it will not pass until someone fixes its cause, and it holds
    // back the collaborator's later events meanwhile: said louder than a failed job
    if (recusaDoHub(resposta.status)) avisarRecusa(evento.id, evento, erro);
  } catch (err) {
    // the operator looks where the error points: identity's own token is not the hub's fault
    erro = `${token === undefined ? 'no token to publish with' : 'hub out of reach'}: ${comCausa(err as Error)}`;
  }
  await evento.update({ ultimo_erro: erro.slice(0, 1000) });
  // an outcome, not a fault of this code: the failed job's line says why, without a stack (every
  // pending event fails at each retry for as long as the hub is away)
  throw new FalhaEsperada(erro);
}
