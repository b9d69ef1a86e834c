import Joi from 'joi';
import { ModelStatic } from 'sequelize';
import { config } from '../../../config';
import { sozinho } from '../../../lib/database';
import { logger } from '../../../lib/logger';
import { ColaboradorBase } from '../../../models/shared/colaborador';
import { PerfilAcessoBase } from '../../../models/shared/perfil-acesso';
import { avisarSeNenhumWorker, comTokenDaFila, DefinicaoDeFila, esperarFimDoJob, eventosDaFila, fila, tokenDaFila } from '../../../queues/fila';
import { lerDoIdentity } from '../leitura-do-identity';
import { Principal } from '../principal';
import { criarColaboradores, ProgressoDoEspelho, ResultadoDoEspelho, UsuarioDoIdentity } from './colaboradores';
import { criarControleDeAcesso } from './permissoes';
import { criarPerfis } from './perfis';

export interface OpcoesDoModuloDeAcesso {
  /** the areas of SPEC 5.2 this service protects: `Acesso inicial` reads each of them */
  areas: string[];
  /**
   * the areas where SPEC states that any action grants read (besides `colaboradores`, the
   * module's own); elsewhere reading needs `ler` itself
   */
  lidasPorQualquerAcao: string[];
  Colaborador: ModelStatic<ColaboradorBase>;
  PerfilAcesso: ModelStatic<PerfilAcessoBase>;
  /** the service's queue that registers identity collaborators on a master's listing */
  filaDeSync: DefinicaoDeFila;
}

const ID_DO_JOB_DE_SYNC = 'sincronizar';
/** How long a sync waits for another one under way (a mirror of thousands takes seconds). */
const ESPERA_PELA_OUTRA_SINCRONIZACAO_S = 60;

const LISTA_DO_IDENTITY = Joi.array()
  .items(
    Joi.object({
      id: Joi.string().required(),
      nome: Joi.string().allow('').required(),
      email: Joi.string().allow('').required(),
      e_master: Joi.boolean().strict().required(),
      setor: Joi.string().allow('', null),
      cargo: Joi.string().allow('', null),
      funcao: Joi.string().allow('', null),
    }).unknown(true),
  )
  // identity lists each person once: a repeated id is not its answer (a proxy's, a paging fault)
  .unique('id')
  .required();

/** identity's collaborators as it lists them, or an error naming what is off. */
function listaDoIdentity(resposta: unknown): UsuarioDoIdentity[] {
  const { error, value } = LISTA_DO_IDENTITY.validate(resposta, { convert: false });
  if (error) throw new Error(`identity's collaborator list is not as expected: ${error.message}`);
  return value as UsuarioDoIdentity[];
}

/** The module's own area (SPEC 4.5): any action in it reads the collaborators. */
export const AREA_DO_MODULO = 'colaboradores';

/**
 * The access module of DESIGN §3, mounted by each service on its own tables: permissions,
 * profiles, collaborators and their mirror of the identity service. Plain domain code: the
 * routes (./rotas.ts) and the sync processor both call it.
 */
export function criarModuloDeAcesso(o: OpcoesDoModuloDeAcesso) {
  const lidas = new Set([AREA_DO_MODULO, ...o.lidasPorQualquerAcao]);
  const controle = criarControleDeAcesso(o.Colaborador, o.PerfilAcesso, () => config().acesso.cacheSegundos, lidas);
  const perfis = criarPerfis(o.PerfilAcesso, o.Colaborador, controle.conferirAlcance, () => controle.invalidar());
  const colaboradores = criarColaboradores(o.Colaborador, o.PerfilAcesso, controle.conferirAlcance, (authId) => controle.invalidar(authId));
  const log = logger('acesso').child({ fila: o.filaDeSync.nome });

  /**
   * The processor's work: reads identity's collaborators with the master's token and mirrors them.
   * One run at a time across processes, identity read under the lock: a run BullMQ hands to a
   * second worker while a stalled first one still runs would otherwise write its older reading
   * last, and undo a removal or a demotion until the next listing. A list not shaped as identity's
   * (a proxy's answer, a changed route) is refused before it is mirrored: taken as the whole of
   * identity, it would mark every collaborator deleted.
   */
  async function sincronizar(token: string, aoProgredir?: (p: ProgressoDoEspelho) => void, sinal?: AbortSignal) {
    const espelho = await sozinho(
      o.filaDeSync.servico,
      'sincronizar-colaboradores',
      async () => {
        const usuarios = listaDoIdentity(await lerDoIdentity<unknown>('/usuario/filtro?perfil=colaborador', token));
        const inicial = await perfis.semearAcessoInicial(o.areas);
        const resultado = await colaboradores.espelhar(usuarios, inicial.perfil.id, aoProgredir);
        return inicial.mudou ? { ...resultado, acesso_inicial_mudou: true } : resultado;
      },
      ESPERA_PELA_OUTRA_SINCRONIZACAO_S,
      sinal,
    );
    // a shutdown ended the wait for the other run (it may outlast the grace): null, to be run again
    if (!espelho && sinal?.aborted) return null;
    if (!espelho) throw new Error(`another collaborator sync held the lock for ${ESPERA_PELA_OUTRA_SINCRONIZACAO_S} s`);
    return espelho;
  }

  /** the queue's event streams heard here (eventosDaFila opens a new one after a close) */
  const ouvidos = new WeakSet<object>();

  /**
   * The sync queue's events, this module listening to how its syncs end: one that changed anyone,
   * in whatever process it ran (a worker apart forgets only its own cache), or that failed midway
   * (it writes row by row, some changes may be in), makes this process forget its cached
   * permissions too, whether or not a listing here waited for it (one that gave up waiting, or
   * another process's listing).
   */
  function eventosOuvidos() {
    const eventos = eventosDaFila(o.filaDeSync);
    if (!ouvidos.has(eventos)) {
      ouvidos.add(eventos);
      eventos.on('completed', ({ returnvalue }) => {
        const r = returnvalue as unknown as (Partial<ResultadoDoEspelho> & { acesso_inicial_mudou?: true }) | null;
        if (r && (r.acesso_inicial_mudou || (r.criados ?? 0) + (r.atualizados ?? 0) + (r.removidos ?? 0) > 0)) controle.invalidar();
      });
      eventos.on('failed', () => controle.invalidar());
    }
    return eventos;
  }

  /**
   * SPEC 4.5 rule 2: before a master's listing, register what identity has. Runs as a queue job
   * that concurrent listings share (a page and its total asked together cost one sync); the
   * listing waits for it a bounded time and lists anyway when it fails or is slow.
   *
   * Only a listing's start syncs, never a later page of a cursor walk (`cursor` given): the walk
   * then lists the people its first page and total counted. A sync between pages would register
   * people the total did not count, and one whose name sorts before the cursor would never be
   * listed in that walk.
   */
  async function sincronizarAntesDeListar(principal: Principal, cursor?: string): Promise<void> {
    if (!principal.master || cursor) return;
    try {
      // apart from the job's data, which the dashboard shows
      await tokenDaFila.guardar(o.filaDeSync, principal.token);
      const q = fila(o.filaDeSync);
      await q.add('sincronizar', {}, { jobId: ID_DO_JOB_DE_SYNC });
      // the cached permissions of the people it changed go as it ends (eventosOuvidos),
      // before this wait, which hears the same events later, goes on
      await esperarFimDoJob(q, ID_DO_JOB_DE_SYNC, eventosOuvidos(), config().acesso.esperaSyncMs);
    } catch (err) {
      // its end may not have been heard yet (the job finished and was removed before the wait
      // looked, which it reports as an error): forgotten here too, which costs only a reread
      controle.invalidar();
      log.warn({ erro: (err as Error).message }, 'listagem sem sincronização completa');
      await avisarSeNenhumWorker(o.filaDeSync);
    }
  }

  /**
   * PATCH /colaborador/{id}/perfil_acesso, on authority read afresh (alcanceParaConceder). A master
   * caller also asks identity whether the person is master now (SPEC 4.5 rule 7), as the local
   * flag changes only at a master listing; a non-master may not read someone else in identity
   * (SPEC 4.1), so for them the local flag alone decides.
   */
  async function vincularPerfil(principal: Principal, id: string, perfilAcessoId: string | null | undefined) {
    const autoridade = await controle.alcanceParaConceder(principal, 'editar', AREA_DO_MODULO);
    const masterNoIdentity = principal.master ? (authId: string) => controle.masterNoIdentity(principal, authId) : undefined;
    return colaboradores.vincularPerfil(id, perfilAcessoId, autoridade, masterNoIdentity);
  }

  return {
    areas: o.areas,
    /** the sync with the newest master token identity still takes; null when none is left */
    sincronizarComTokenDoSync: (aoProgredir?: (p: ProgressoDoEspelho) => void, sinal?: AbortSignal) =>
      comTokenDaFila(o.filaDeSync, (token) => sincronizar(token, aoProgredir, sinal)),
    controle,
    perfis,
    colaboradores,
    sincronizar,
    sincronizarAntesDeListar,
    vincularPerfil,
    /** seeds `Acesso inicial` and listens to the queue's events, so no sync's end is missed */
    async preparar() {
      await perfis.semearAcessoInicial(o.areas);
      await eventosOuvidos().waitUntilReady();
    },
  };
}

export type ModuloDeAcesso = ReturnType<typeof criarModuloDeAcesso>;
