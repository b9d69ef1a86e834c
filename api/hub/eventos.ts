import { UniqueConstraintError } from 'sequelize';
import { config } from '../../config';
import { agrupar } from '../../lib/agrupar';
import { banco, chaveDuplicada, dataSql, emPotenciaDeDois, escreverJuntos, lerLinhas, repetirEmConflito } from '../../lib/database';
import { CacheComPrazo, CargasEmCurso } from '../../lib/cache';
import { idDoAplicativoDe } from '../../lib/credenciais';
import { logger } from '../../lib/logger';
import { GravadorEmLotes, MENSAGEM_MAXIMA } from '../../lib/lotes';
import { redis } from '../../lib/redis';
import { Aplicativo, Assinatura, Evento, TipoDeEvento, VersaoDeEvento } from '../../models/hub';
import { comONome, TIPOS_DO_IDENTITY } from '../../models/hub/tipo-de-evento';
import { novoId } from '../../models/shared/base';
import { ID_ASCII } from '../../models/shared/sql';
import { ErroDeDominio, proibido, referenciaInvalida } from '../shared/errors';
import { Principal } from '../shared/principal';
import { ASSINATURA_RECEBE, dividirEmLotes, enfileirarLotes, jobsNaFila } from './entregas';
import { validarDados } from './esquemas';
import { esperarSincronizacao } from './sincronizacao';

const log = logger('hub-eventos');

export interface Publicacao {
  tipo: string;
  versao: number;
  dados: unknown;
  id?: string | null;
}

export interface RespostaDaPublicacao {
  id: string;
  entregas: number;
}

/**
 * What a publication looks up before it is stored changes rarely: publisher, type and version
 * are remembered a few seconds (a change made through this process forgets them at once).
 * Subscriptions are never cached: an event accepted after a subscription exists must reach it.
 */
const PRAZO_MS = 5000;
const publicadores = new CacheComPrazo<string, Aplicativo | null>(() => PRAZO_MS);
/**
 * Publishers still unknown or inactive after a sync of the hub's, lately: none runs another within
 * the minute (a departed application's token stays valid until it expires, and each sync reads
 * identity). The minute is the hub's, not each process's: the process whose sync left the
 * publisher refused says so in a Redis key (recusadoNoHubAte) the others read before they sync;
 * this process's mark only spares a Redis call per refused publication.
 */
const INTERVALO_DAS_SINCRONIZACOES_MS = 60_000;
const recusadosAposSincronizar = new CacheComPrazo<string, true>(() => INTERVALO_DAS_SINCRONIZACOES_MS);
/**
 * That sync while it runs, giving the publisher as read after it (and marked, when still refused,
 * before it gives it): the publisher's other publications meanwhile wait for the same one.
 */
const sincronizacoesPorPublicador = new CargasEmCurso<string, Aplicativo | null>();
const tipos = new CacheComPrazo<string, TipoDeEvento | null>(() => PRAZO_MS);
const versoes = new CacheComPrazo<string, VersaoDeEvento | null>(() => PRAZO_MS);
/** only to size batches: the deliveries themselves come from the subscriptions read as it is written */
const assinaturasPorVersao = new CacheComPrazo<string, number>(() => PRAZO_MS);

export function esquecerContratos(): void {
  publicadores.esquecer();
  tipos.esquecer();
  versoes.esquecer();
  esquecerAssinaturas();
}

/** A subscription created, changed or deleted through this process sizes batches at once. */
export function esquecerAssinaturas(): void {
  assinaturasPorVersao.esquecer();
}

/** Per row of SQL text: an event beside its `dados` and its type's name, a delivery (three ids, three dates). */
const BYTES_POR_LINHA = 256;

/**
 * What a publication adds to its batch's message: `dados` and the type's name escaped for SQL (at
 * most twice their bytes) and one row per delivery, so a batch of small events on a type with
 * many subscriptions is cut as surely as one of large bodies.
 */
export function pesoDaPublicacao(dados: string, assinaturas: number, tipo = ''): number {
  return 2 * (Buffer.byteLength(dados) + Buffer.byteLength(tipo)) + BYTES_POR_LINHA * (1 + assinaturas);
}

interface Pedido {
  /** bytes this publication adds to its batch's message (pesoDaPublicacao) */
  peso: number;
  aplicativoId: string;
  idDoPublicador: string | null;
  tipoId: string;
  /** the type's name as the publication found it: the event keeps it, whatever the type is renamed to later */
  tipo: string;
  versao: number;
  /** as JSON text */
  dados: string;
}

/** The event a publisher's `id` already made, with the job id of the batch of its first attempts. */
async function anterior(aplicativoId: string, id: string | null): Promise<(RespostaDaPublicacao & { lote: string | null }) | null> {
  if (!id) return null;
  const e = await Evento.findOne({ where: { aplicativo_origem_id: aplicativoId, id_do_publicador: id }, attributes: ['id', 'entregas', 'lote'] });
  return e ? { id: e.id, entregas: e.entregas, lote: e.lote } : null;
}

const resposta = (r: RespostaDaPublicacao): RespostaDaPublicacao => ({ id: r.id, entregas: r.entregas });

/**
 * Hands stored deliveries to the delivery queue. When Redis refuses: 202 means stored and enqueued
 * (DESIGN §5), and with Redis down the publisher is told at once (§8). What is stored is not lost:
 * the sweep enqueues it once Redis is back, and a retry with the same `id` gets the first answer.
 */
async function enfileirarOuRecusar(enfileirar: () => Promise<void>, entregas: number): Promise<void> {
  try {
    await enfileirar();
  } catch (err) {
    log.warn({ erro: (err as Error).message, entregas }, 'entregas ficam para a varredura');
    throw filaIndisponivel(true);
  }
}

/**
 * The 503 of a stored event whose deliveries the queue refused: only a publication with an `id` can
 * be asked again safely. One without says not to, and carries no Retry-After (a client honouring
 * it would publish a second event).
 */
const filaIndisponivel = (comId: boolean) =>
  new ErroDeDominio(
    'indisponivel',
    comId
      ? 'A fila de entregas está indisponível; o evento foi guardado e sairá pela varredura. Repita com o mesmo id para ter a resposta.'
      : 'A fila de entregas está indisponível; o evento foi guardado e sairá pela varredura. Não o repita: sem id, a repetição seria outro evento.',
    undefined,
    { retryAfterSegundos: comId ? undefined : null },
  );

/**
 * A repeated `id` may follow a 503: the batch job of the event's first attempts is added again,
 * under its recorded id, with every delivery of that batch (its other events' too) not yet tried
 * nor given a job of its own, before the 202. While the first one is queued the add is a no-op, so
 * nothing is sent twice; gone (never added, or failed for good), it comes back with what is left.
 * A delivery's own job is looked for in the queue too: a failed first attempt the database did not
 * record leaves the row untouched, its job waiting for the schedule, and the batch would call a
 * failing subscriber again at once.
 */
async function confirmarNaFila(r: RespostaDaPublicacao & { lote: string | null }): Promise<RespostaDaPublicacao> {
  if (!r.entregas || !r.lote) return resposta(r);
  const lote = r.lote;
  const pendentes = (
    await lerLinhas<{ id: string }>(
      banco('hub'),
      `SELECT e.id FROM evento ev JOIN entrega e ON e.evento_id = ev.id
        WHERE ev.lote = ? AND e.situacao = 'pendente' AND e.tentativas = 0 AND e.atualizada_em = e.criada_em`,
      [lote],
    )
  ).map((e) => e.id);
  if (pendentes.length) {
    await enfileirarOuRecusar(async () => {
      const comJobProprio = await jobsNaFila(pendentes);
      const doLote = pendentes.filter((id) => !comJobProprio.has(id));
      if (doLote.length) await enfileirarLotes([{ id: lote, entregas: doLote }]);
    }, pendentes.length);
  }
  return resposta(r);
}

const publicador = (sub: string) =>
  publicadores.obterOuCarregar(sub, () => Aplicativo.findOne({ where: { identificador_no_auth: sub }, attributes: ['id', 'identificador_no_auth', 'ativo'] }));

const chaveDoRecusado = (sub: string) => `${config().queuePrefix}:hub:recusado-apos-sincronizar:${sub}`;

/**
 * Until when the publisher stands refused by a sync of the hub's (any process's) within the
 * minute: the end of its Redis key, set only after a sync that left it unknown or inactive, so a
 * key never stands for a sync still to come (a process that reads the hub's copy on its word has
 * nothing to wait for). None, or Redis out of reach: undefined, and the process syncs as alone.
 */
async function recusadoNoHubAte(sub: string): Promise<number | undefined> {
  try {
    const resta = await redis('produtor').pttl(chaveDoRecusado(sub));
    return resta > 0 ? Date.now() + resta : undefined;
  } catch (err) {
    log.warn({ erro: (err as Error).message }, 'recusa do publicador não lida no Redis: este processo decide sozinho');
    return undefined;
  }
}

/** The publisher still refused after this process's sync: no process runs another within the minute. */
async function marcarRecusadoNoHub(sub: string): Promise<void> {
  try {
    await redis('produtor').set(chaveDoRecusado(sub), '1', 'PX', INTERVALO_DAS_SINCRONIZACOES_MS);
  } catch (err) {
    log.warn({ erro: (err as Error).message }, 'recusa do publicador não marcada no Redis: os outros processos decidem sozinhos');
  }
}

/** A publisher identity could not be asked about: 503, with when to try again. */
const identitySemResposta = () =>
  new ErroDeDominio('indisponivel', 'O hub não conseguiu confirmar este aplicativo com o identity; tente de novo.', undefined, {
    retryAfterSegundos: 5,
  });

/**
 * The publisher as the hub knows it after the non-masters' sync, for an application identity
 * vouches for (its token) that the hub does not know or holds inactive: the hub has not synced
 * since it was made (nobody listed the hub's applications meanwhile; the identity application
 * itself, on a first start) or since it came back in identity. Callers in any process join the
 * same queued sync (its job id). Still refused after it (deleted in identity, its token valid
 * until it expires), it is remembered for a minute, here and in Redis; a sync of another process's
 * that left it refused within the minute spares this one its own, to that minute's end.
 */
function publicadorAposSincronizar(quem: Principal): Promise<Aplicativo | null> {
  return sincronizacoesPorPublicador.compartilhar(quem.sub, async () => {
    const recusadoAte = await recusadoNoHubAte(quem.sub);
    const releitura = () => (publicadores.esquecer(quem.sub), publicador(quem.sub));
    let sincronizacao = recusadoAte === undefined ? await esperarSincronizacao() : undefined;
    let app = await releitura();
    // a sync joined that had started before this publication may have read identity before the
    // application was made, so a refusal waits for a later run: joining that same run again (the
    // first wait ran out while it still ran) proves nothing, while any other was made after it,
    // and so reads identity after the publication came. Bounded: each wait lasts up to
    // HUB_ESPERA_SYNC_MS.
    const anterior = sincronizacao?.jaRodava ? sincronizacao.rodada : undefined;
    let posterior = !sincronizacao?.jaRodava;
    for (let vez = 0; !app?.ativo && !posterior && vez < ESPERAS_POR_UMA_SINCRONIZACAO_POSTERIOR; vez++) {
      sincronizacao = await esperarSincronizacao();
      posterior = !sincronizacao.jaRodava || sincronizacao.rodada !== anterior;
      app = await releitura();
    }
    if (!app?.ativo) {
      // identity not read (failing, slow, or the hub without its token), or read by no sync that
      // started after this publication: nothing says the application left it, so the publisher is
      // told to try again, and no refusal is kept
      if (sincronizacao && (!sincronizacao.concluida || !posterior)) throw identitySemResposta();
      recusadosAposSincronizar.guardar(quem.sub, true, recusadoAte);
      if (recusadoAte === undefined) await marcarRecusadoNoHub(quem.sub);
    }
    return app;
  });
}

/** Waits after the first for a sync that started after the publication (publicadorAposSincronizar). */
const ESPERAS_POR_UMA_SINCRONIZACAO_POSTERIOR = 2;

/**
 * For tests standing for another hub process: this one forgets what it knows of publishers (read,
 * refused after a sync, being synced for), as a process sharing only the database and Redis would.
 */
export function esquecerPublicadores(): void {
  publicadores.esquecer();
  recusadosAposSincronizar.esquecer();
  sincronizacoesPorPublicador.esquecer();
}

/**
 * The publisher, an application the hub holds active (one that left identity publishes nothing),
 * or 403: the route's permission, checked before its body (DESIGN §10), and again, from the cache,
 * by the publication.
 */
export async function publicadorAtivo(quem: Principal): Promise<Aplicativo> {
  let app = await publicador(quem.sub);
  // the mark and the sync under way are read with no await between: a publication joins the sync
  // under way or finds the mark it left, and never starts a second one within the minute
  if (!app?.ativo && !recusadosAposSincronizar.obter(quem.sub)) app = await publicadorAposSincronizar(quem);
  if (!app) throw proibido('O aplicativo não está registrado no hub.');
  if (!app.ativo) throw proibido('O aplicativo está inativo no hub (saiu do identity) e não publica eventos.');
  return app;
}

/**
 * POST /eventos (DESIGN §5): the owner, an active application (one that left identity publishes
 * nothing), publishes in a version that is not switched off; `dados` follows the version's schema;
 * the event and one delivery per active subscription of that version whose subscriber is active
 * are stored, and handed to the delivery queue, before the answer. The same publisher
 * repeating an `id` gets the first answer and creates nothing.
 */
export async function publicarEvento(quem: Principal, p: Publicacao): Promise<RespostaDaPublicacao> {
  const app = await publicadorAtivo(quem);
  const repetido = await anterior(app.id, p.id ?? null);
  if (repetido) return confirmarNaFila(repetido);
  const chave = p.id == null ? null : `${app.id}\n${p.id}`;
  const emVoo = chave === null ? undefined : publicacoesEmVoo.get(chave);
  if (emVoo) return emVoo;
  // listed before its first wait (the type, version and subscriptions it reads), so a repeat
  // arriving meanwhile waits for this one's answer instead of reaching a batch beside it
  const publicacao = publicarNova(app, p);
  if (chave !== null) {
    publicacoesEmVoo.set(chave, publicacao);
    publicacao.finally(() => publicacoesEmVoo.delete(chave)).catch(() => undefined);
  }
  return publicacao;
}

/**
 * identity given another application (IDENTITY_CLIENT_ID) that the hub already knew publishes
 * its `colaborador.*` events: the sync of the hub's applications passes those types to it
 * (criarTiposDoIdentity), and nothing else would start one before a master lists them. True once
 * it owns the type; a sync that could not read identity is the publisher's to retry (503).
 */
async function tiposPassadosAoIdentity(app: Aplicativo, tipo: TipoDeEvento): Promise<boolean> {
  if (!TIPOS_DO_IDENTITY.includes(tipo.nome) || app.identificador_no_auth !== (await idDoAplicativoDe('identity'))) return false;
  // identity retries every refused event: after a sync that left the types where they were (the
  // hub's IDENTITY_CLIENT_ID another), the next waits a minute, not the next attempt
  if (passagemRecusada.obter(app.id)) return false;
  if (!(await esperarSincronizacao()).concluida) throw identitySemResposta();
  const passados = (await TipoDeEvento.count({ where: { id: tipo.id, aplicativo_id: app.id } })) > 0;
  // passed by a sync that may have run in another process, whose forgetting does not reach this
  // one; every name, since the cache keeps each spelling a publisher used (the lookup ignores case)
  if (passados) tipos.esquecer();
  else passagemRecusada.guardar(app.id, true);
  return passados;
}
/** identity's applications whose refused `colaborador.*` events start no sync in this process, for a minute. */
const passagemRecusada = new CacheComPrazo<string, true>(() => INTERVALO_DAS_SINCRONIZACOES_MS);

/** A publication no earlier one of its `id` made: checked against its type and version, then batched. */
async function publicarNova(app: Aplicativo, p: Publicacao): Promise<RespostaDaPublicacao> {
  const tipoPeloNome = () =>
    tipos.obterOuCarregar(p.tipo, () => TipoDeEvento.findOne({ where: comONome(p.tipo), attributes: ['id', 'nome', 'aplicativo_id'] }));
  let tipo = await tipoPeloNome();
  if (!tipo) throw referenciaInvalida('tipo', 'Tipo de evento não encontrado.');
  if (tipo.aplicativo_id !== app.id && (await tiposPassadosAoIdentity(app, tipo))) tipo = await tipoPeloNome();
  if (!tipo || tipo.aplicativo_id !== app.id) throw proibido('Só o aplicativo dono do tipo publica seus eventos.');
  const versao = await versoes.obterOuCarregar(`${tipo.id}:${p.versao}`, () =>
    VersaoDeEvento.findOne({ where: { tipo_de_evento_id: tipo.id, versao: p.versao } }),
  );
  if (!versao) throw referenciaInvalida('versao', 'Versão não encontrada para o tipo de evento.');
  if (versao.situacao === 'desligada') throw referenciaInvalida('versao', 'Versão desligada: não aceita novos eventos.');
  validarDados(`${tipo.id}:${versao.versao}`, String(versao.atualizada_em.getTime()), () => versao.esquema, p.dados);
  const assinaturas = await assinaturasPorVersao.obterOuCarregar(`${tipo.id}:${p.versao}`, () =>
    Assinatura.count({ where: { tipo_de_evento_id: tipo.id, versao_do_esquema: p.versao, ativa: true } }),
  );
  const dados = JSON.stringify(p.dados);
  // the type's own spelling of its name (the lookup ignores case), as deliveries always carried it
  const r = await lotes.guardar({
    peso: pesoDaPublicacao(dados, assinaturas, tipo.nome),
    aplicativoId: app.id,
    idDoPublicador: p.id ?? null,
    tipoId: tipo.id,
    tipo: tipo.nome,
    versao: p.versao,
    dados,
  });
  if (r instanceof ErroDeDominio) throw r;
  return r;
}

/**
 * Publications of this process on their way to a batch, by publisher and `id`: a repeat sent
 * while the first still waits (a retry after the publisher's own time-out) gets its answer, as a
 * repeat of a stored one does, its refusal too (a 400 or 422 of its body: one `id`, one
 * publication). Written too, the two met in their batches' unique key, and one batch went back to
 * writing its publications one by one, up to 500 of every publisher's.
 */
const publicacoesEmVoo = new Map<string, Promise<RespostaDaPublicacao>>();

/**
 * Publications are written in group commits (lib/lotes.ts), two batches at once: a third gave
 * smaller batches, more round trips per event and no more events per second. When a batch fails on
 * a repeated `id` (inside the batch, or racing another batch), each goes alone: the first wins,
 * the others get its answer; any other failure fails the batch.
 */
const lotes = new GravadorEmLotes<Pedido, RespostaDaPublicacao | ErroDeDominio>((lote) => gravar(lote), {
  maximo: 500,
  // a batch travels as one message (one transaction, so a failed batch rewrites all of it alone)
  peso: { de: (p) => p.peso, maximo: MENSAGEM_MAXIMA },
  gravadores: 2,
  gravarUm: async (p, erroDoLote) => {
    if (!repetido(erroDoLote)) throw erroDoLote;
    const primeira = await anterior(p.aplicativoId, p.idDoPublicador);
    // the first may have failed to queue its batch (503): a repeat answers 202 only once it is queued
    if (primeira) return confirmarNaFila(primeira);
    try {
      return (await gravar([p]))[0];
    } catch (err) {
      // the other batch writing the same `id` (this process's second writer, or another process) committed first
      const outra = repetido(err) ? await anterior(p.aplicativoId, p.idDoPublicador) : null;
      if (!outra) throw err;
      return confirmarNaFila(outra);
    }
  },
});

const repetido = (err: unknown) => err instanceof UniqueConstraintError || chaveDuplicada(err);

/** ASSINATURA_RECEBE still, and still of the version of the `nova` row's event. */
const RECEBE = `${ASSINATURA_RECEBE} AND a.versao_do_esquema = nova.versao`;

/**
 * Each publication's answer, or, for one whose deliveries the queue refused after the commit, the
 * 503 that says so: one stored with no delivery to hand over gets its 202 whatever the queue did,
 * as it would alone.
 */
async function gravar(lote: Pedido[]): Promise<(RespostaDaPublicacao | ErroDeDominio)[]> {
  const tiposDoLote = emPotenciaDeDois([...new Set(lote.map((p) => p.tipoId))]);
  const assinaturas = await lerLinhas<{ id: string; tipo_de_evento_id: string; versao_do_esquema: number }>(
    banco('hub'),
    `SELECT a.id, a.tipo_de_evento_id, a.versao_do_esquema FROM assinatura a JOIN aplicativo s ON s.id = a.aplicativo_assinante_id
      WHERE ${ASSINATURA_RECEBE} AND a.tipo_de_evento_id IN (${tiposDoLote.map(() => '?').join(', ')})`,
    tiposDoLote,
  );
  const agora = new Date();
  const eventos = lote.map((p) => ({
    id: novoId(),
    aplicativo_origem_id: p.aplicativoId,
    id_do_publicador: p.idDoPublicador,
    tipo_de_evento_id: p.tipoId,
    tipo: p.tipo,
    versao: p.versao,
    dados: p.dados,
    entregas: 0,
    lote: null as string | null,
    criado_em: agora,
  }));
  const porVersao = agrupar(assinaturas, (a) => `${a.tipo_de_evento_id}:${a.versao_do_esquema}`, (a) => a.id);
  const entregas = eventos.flatMap((e) => {
    const destinos = porVersao.get(`${e.tipo_de_evento_id}:${e.versao}`) ?? [];
    e.entregas = destinos.length;
    return destinos.map((assinaturaId) => ({ id: novoId(), evento_id: e.id, assinatura_id: assinaturaId, versao: e.versao }));
  });
  // the batch jobs, cut in event order; each event's `lote` is written with it below
  const lotesDoGravar = dividirEmLotes(eventos, entregas);
  // in subscription order: the rows below lock their subscriptions in this order, as every
  // multi-row lock of them is taken (by id), so two writers never wait on each other in a cycle
  entregas.sort((a, b) => (a.assinatura_id < b.assinatura_id ? -1 : a.assinatura_id > b.assinatura_id ? 1 : 0));
  const momento = dataSql(agora);
  // Prepared rows, one multi-row insert per table, one commit (lib/database.ts). The subscriptions
  // were read before this transaction: the deliveries are stored through a join that reads each,
  // and its subscriber, again with a shared lock, so one deactivated, deleted or moved to another
  // version since, or whose subscriber the sync made inactive since, has its delivery stored
  // cancelled (the change came first), and one being changed is waited for (no pending delivery of
  // an inactive subscription or subscriber, which a quick reactivation would send, nor one the
  // sync's cancellation would miss, and no event of a version the subscriber had left). The rows
  // travel as JSON (JSON_TABLE reads alike on MariaDB and MySQL 8; its ids are read as ASCII, as
  // the tables hold them).
  await repetirEmConflito('publicação', () =>
    escreverJuntos(banco('hub'), [
      [
        'INSERT INTO evento (id, aplicativo_origem_id, id_do_publicador, tipo_de_evento_id, tipo, versao, dados, entregas, lote, criado_em) VALUES ?',
        [eventos.map((e) => [e.id, e.aplicativo_origem_id, e.id_do_publicador, e.tipo_de_evento_id, e.tipo, e.versao, e.dados, e.entregas, e.lote, momento])],
      ],
      ...(entregas.length
        ? ([
            [
              `INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, proxima_tentativa_em, criada_em, atualizada_em)
                SELECT STRAIGHT_JOIN nova.id, nova.evento_id, nova.assinatura_id, IF(${RECEBE}, 'pendente', 'cancelada'), 0, IF(${RECEBE}, ?, NULL), ?, ?
                  FROM JSON_TABLE(?, '$[*]' COLUMNS (id CHAR(36) ${ID_ASCII} PATH '$[0]', evento_id CHAR(36) ${ID_ASCII} PATH '$[1]',
                                                     assinatura_id CHAR(36) ${ID_ASCII} PATH '$[2]', versao INT PATH '$[3]')) nova
                  JOIN assinatura a ON a.id = nova.assinatura_id
                  JOIN aplicativo s ON s.id = a.aplicativo_assinante_id
                LOCK IN SHARE MODE`,
              [momento, momento, momento, JSON.stringify(entregas.map((e) => [e.id, e.evento_id, e.assinatura_id, e.versao]))],
            ],
          ] as [string, unknown[]][])
        : []),
    ]),
  );
  const respostas = eventos.map((e) => ({ id: e.id, entregas: e.entregas }));
  try {
    await enfileirarOuRecusar(() => enfileirarLotes(lotesDoGravar), entregas.length);
  } catch (err) {
    if (!(err instanceof ErroDeDominio)) throw err;
    return respostas.map((r, i) => (r.entregas ? filaIndisponivel(eventos[i].id_do_publicador !== null) : r));
  }
  return respostas;
}

