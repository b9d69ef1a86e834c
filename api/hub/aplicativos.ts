import { Op, Transaction, WhereOptions } from 'sequelize';
import { idDoAplicativoDe } from '../../lib/credenciais';
import { banco, decidirSobTrava, sozinho } from '../../lib/database';
import { comCausa } from '../../lib/erros';
import { emSegundoPlano } from '../../lib/lifecycle';
import { logger, umaVezPorMinuto } from '../../lib/logger';
import { Aplicativo, Assinatura, TipoDeEvento } from '../../models/hub';
import { TokenRecusado } from '../../queues/fila';
import { iso } from '../../models/shared/base';
import { naoEncontrado } from '../shared/errors';
import { lerDoIdentity, lerDoIdentitySeExistir } from '../shared/leitura-do-identity';
import { contem, offset, PaginaNumerada } from '../shared/paginacao';
import { esquecerTokenDoServico, tokenDoServico } from '../shared/token-do-servico';
import { cancelarPendentes, cancelarPendentesEmPaginas, removerJobs } from './entregas';
import { esquecerContratos } from './eventos';
import { criarTiposDoIdentity } from './tipos';

const log = logger('hub-aplicativos');

/** SPEC §2 Aplicativo of the hub. */
export interface AplicativoJson {
  id: string;
  nome: string;
  descricao: string | null;
  ativo: boolean;
  identificador_no_auth: string;
  quantidade_de_tipos_de_evento: number;
  quantidade_de_assinaturas: number;
  criado_em: string;
  atualizado_em: string;
}

/** How many types each application owns and in how many live subscriptions it is subscriber. */
async function contagens(ids: string[], transaction?: Transaction): Promise<Map<string, { tipos: number; assinaturas: number }>> {
  const mapa = new Map(ids.map((id) => [id, { tipos: 0, assinaturas: 0 }]));
  if (!ids.length) return mapa;
  const [tipos, assinaturas] = await Promise.all([
    TipoDeEvento.count({ where: { aplicativo_id: ids }, group: ['aplicativo_id'], transaction }),
    Assinatura.count({ where: { aplicativo_assinante_id: ids }, group: ['aplicativo_assinante_id'], transaction }),
  ]);
  for (const t of tipos as unknown as { aplicativo_id: string; count: number }[]) mapa.get(t.aplicativo_id)!.tipos = Number(t.count);
  for (const a of assinaturas as unknown as { aplicativo_assinante_id: string; count: number }[]) {
    mapa.get(a.aplicativo_assinante_id)!.assinaturas = Number(a.count);
  }
  return mapa;
}

async function comoJson(apps: Aplicativo[]): Promise<AplicativoJson[]> {
  const c = await contagens(apps.map((a) => a.id));
  return apps.map((a) => ({
    id: a.id,
    nome: a.nome,
    descricao: a.descricao,
    ativo: a.ativo,
    identificador_no_auth: a.identificador_no_auth,
    quantidade_de_tipos_de_evento: c.get(a.id)!.tipos,
    quantidade_de_assinaturas: c.get(a.id)!.assinaturas,
    criado_em: iso(a.criado_em)!,
    atualizado_em: iso(a.atualizado_em)!,
  }));
}

const ALFABETICA: [string, string][] = [
  ['nome', 'ASC'],
  ['id', 'ASC'],
];

export async function listarAplicativos(pagina: number, tamanho: number): Promise<PaginaNumerada<AplicativoJson>> {
  const { rows, count } = await Aplicativo.findAndCountAll({ order: ALFABETICA, offset: offset(pagina, tamanho), limit: tamanho });
  return { itens: await comoJson(rows), pagina, tamanho, total: count };
}

export async function autocompletarAplicativos(busca: string | undefined, pagina: number, tamanho: number) {
  const where: WhereOptions = busca ? { nome: { [Op.like]: contem(busca) } } : {};
  const { rows, count } = await Aplicativo.findAndCountAll({
    where,
    attributes: ['id', 'nome', 'ativo'],
    order: ALFABETICA,
    offset: offset(pagina, tamanho),
    limit: tamanho,
  });
  return { itens: rows.map((a) => ({ id: a.id, nome: a.nome, ativo: a.ativo })), pagina, tamanho, total: count };
}

export async function filtrarAplicativos(f: { nome?: string; ativo?: boolean }): Promise<AplicativoJson[]> {
  const e: WhereOptions[] = [];
  if (f.nome) e.push({ [Op.or]: [{ nome: { [Op.like]: contem(f.nome) } }, { descricao: { [Op.like]: contem(f.nome) } }] });
  if (f.ativo !== undefined) e.push({ ativo: f.ativo });
  return comoJson(await Aplicativo.findAll({ where: { [Op.and]: e }, order: ALFABETICA }));
}

export async function aplicativoPorId(id: string): Promise<AplicativoJson> {
  const a = await Aplicativo.findByPk(id);
  if (!a) throw naoEncontrado('Aplicativo');
  return (await comoJson([a]))[0];
}

interface AplicativoDoIdentity {
  id: string;
  nome: string;
  descricao: string | null;
  ativo: boolean;
}

async function aplicativosDoIdentity(token: string): Promise<AplicativoDoIdentity[]> {
  const todos: AplicativoDoIdentity[] = [];
  for (let pagina = 1; ; pagina++) {
    const corpo = await lerDoIdentity<{ itens: AplicativoDoIdentity[]; total: number }>(`/aplicativo?pagina=${pagina}&tamanho=500`, token);
    todos.push(...corpo.itens);
    if (!corpo.itens.length || todos.length >= corpo.total) return todos;
  }
}

/**
 * SPEC §3 Hub application activity: new identity applications enter active; names, descriptions
 * and, decided for the hub, whether it is active follow identity (one deactivated there is made
 * inactive here as one that left, its pending deliveries cancelled); an application gone from
 * identity (missing from its listing and 404 by its id, confirmarSaidas) is deleted, or made
 * inactive while it still owns types or has subscriptions (inactive, it neither publishes nor
 * receives; back in identity, it is active again and its active subscriptions receive the events
 * published from then on). The identity application's own types (`colaborador.*`) are created
 * when it first appears (DESIGN §10).
 */
export async function sincronizarAplicativos(tokenDoChamador?: string, sinal?: AbortSignal) {
  const primeiro = tokenDoChamador ?? (await tokenDoServico('hub'));
  if (!primeiro) {
    avisarSemCredenciais();
    return { ignorado: 'sem token: o segredo do hub não está registrado' };
  }
  let token = primeiro;
  // the hub's own token refused is not reused: the next sync asks for a new one (identity may have
  // new keys), whether the listing or a departure's confirmation, which the sync outlives, was refused
  const aoRecusar = (err: unknown) => {
    if (!tokenDoChamador && err instanceof TokenRecusado && err.statusDoIdentity === 401) esquecerTokenDoServico('hub', token);
  };
  // one at a time across the hub's processes: a master's sync and another's, on two workers, would
  // both create an application new to both, and the second would fail on its unique key
  try {
    // a shutdown gives up the wait for another sync (it may last longer than the shutdown's
    // grace): null, to be run again
    const r = await sozinho(
      'hub',
      'sincronizar-aplicativos',
      async () => {
        // asked again once the turn came (it is kept): the wait may have outlasted the one held
        if (!tokenDoChamador) token = (await tokenDoServico('hub')) ?? token;
        return sincronizarCom(token, aoRecusar);
      },
      ESPERA_PELA_OUTRA_SYNC_S,
      sinal,
    );
    if (!r && sinal?.aborted) return null;
    return r ?? { ignorado: 'outra sincronização não terminou a tempo' };
  } catch (err) {
    aoRecusar(err);
    throw err;
  }
}

/**
 * Without its own credentials the hub syncs only on a master's listing, and a publisher it does not
 * know yet is answered 503 ("could not confirm with identity"): said where the cause is, once a
 * minute, not left to that answer.
 */
const avisarSemCredenciais = umaVezPorMinuto(() =>
  log.error(
    { configuracao: 'HUB_CLIENT_ID/HUB_CLIENT_SECRET' },
    'o hub não tem credenciais próprias no identity: sem a listagem de um master os aplicativos não são sincronizados, e publicações de aplicativos ainda não vistos são recusadas (503)',
  ),
);

/** How long a sync waits for another under way (a slow identity) before giving up its turn. */
const ESPERA_PELA_OUTRA_SYNC_S = 30;

async function sincronizarCom(token: string, aoRecusar: (err: unknown) => void) {
  // once each: offset pages read while identity gained an application can list another twice
  const listados = [...new Map((await aplicativosDoIdentity(token)).map((a) => [a.id, a])).values()];
  // deleted ones too: identity's id stays unique among them, and one may show up again
  const todosOsLocais = await Aplicativo.findAll({ paranoid: false });
  const porAuth = new Map(todosOsLocais.map((a) => [a.identificador_no_auth, a]));
  const listadosIds = new Set(listados.map((a) => a.id));
  const faltando = todosOsLocais.filter((a) => !a.deletado_em && !listadosIds.has(a.identificador_no_auth));
  const uso = await contagens(faltando.map((a) => a.id));
  // already inactive and still in use: it stays so whether it left or not, nothing to ask nor decide
  const aConfirmar = faltando.filter((a) => a.ativo || (!uso.get(a.id)!.tipos && !uso.get(a.id)!.assinaturas));
  const { presentes, sairam } = await confirmarSaidas(aConfirmar, token, aoRecusar);
  const remotos = [...listados, ...presentes];
  const r = { criados: 0, atualizados: 0, removidos: 0, desativados: 0 };
  for (const remoto of remotos) {
    const local = porAuth.get(remoto.id);
    const ativo = remoto.ativo !== false;
    if (!local) {
      await Aplicativo.create({ identificador_no_auth: remoto.id, nome: remoto.nome, descricao: remoto.descricao, ativo });
      r.criados++;
    } else if (local.deletado_em) {
      // one commit: a failure between the two would bring it back under its old name and state
      await banco('hub').transaction(async (transaction) => {
        await local.restore({ transaction });
        await local.update({ nome: remoto.nome, descricao: remoto.descricao, ativo }, { transaction });
      });
      r.criados++;
    } else if (local.ativo && !ativo) {
      // deactivated in identity: inactive here as one that left, under its row's lock
      if (await desativarNoHub(local.id, { nome: remoto.nome, descricao: remoto.descricao })) r.desativados++;
    } else if (!local.ativo && ativo) {
      await reativarNoHub(local.id, { nome: remoto.nome, descricao: remoto.descricao });
      r.atualizados++;
    } else if (local.nome !== remoto.nome || local.descricao !== remoto.descricao) {
      await local.update({ nome: remoto.nome, descricao: remoto.descricao });
      r.atualizados++;
    }
  }
  for (const a of sairam) {
    const saida = await sairDoHub(a.id);
    if (saida) r[saida]++;
  }
  // publishers enter, leave or change state: publishing sees it at once
  if (r.criados || r.atualizados || r.removidos || r.desativados) esquecerContratos();
  const identity = await idDoAplicativoDe('identity');
  if (identity && remotos.some((a) => a.id === identity)) await criarTiposDoIdentity(identity);
  return r;
}

/**
 * Which of the applications missing from identity's listing did leave it. The listing, read page
 * by page while identity changes, can miss one still there, and leaving costs an application its
 * pending deliveries and its publications, so each is read by its id first (any application's
 * token may, the hub's own too): only a 404 confirms it left; found, it is handled as if listed.
 * Any other failure leaves it, and the ones after it, as they are until the next sync: identity
 * failing on one would most likely fail on the next, and a sync spends at most one timeout here.
 * A refused token is told to `aoRecusar`, as the listing's refusal would be.
 */
async function confirmarSaidas(faltando: Aplicativo[], token: string, aoRecusar: (err: unknown) => void) {
  const presentes: AplicativoDoIdentity[] = [];
  const sairam: Aplicativo[] = [];
  for (const [i, a] of faltando.entries()) {
    try {
      const lido = await lerDoIdentitySeExistir<AplicativoDoIdentity>(`/aplicativo/${encodeURIComponent(a.identificador_no_auth)}`, token);
      if (lido) presentes.push(lido);
      else sairam.push(a);
    } catch (err) {
      aoRecusar(err);
      const adiados = faltando.length - i;
      log.warn({ erro: comCausa(err as Error), aplicativo: a.id, adiados }, 'saída do identity não confirmada: fica para a próxima sincronização');
      break;
    }
  }
  return { presentes, sairam };
}

/**
 * An application gone from identity is deleted, or made inactive while it owns types or has
 * subscriptions. Creating a type or a subscription reads the application's row FOR SHARE, so
 * neither slips in between the count and the decision (decidirSobTrava).
 * Made inactive, it receives nothing more (its subscriptions' events may carry collaborators'
 * data): once that commits, the pending deliveries of each of its subscriptions are cancelled, as
 * deactivating that subscription cancels them, its `ativa` left as it is. A publication or a replay
 * reads the application FOR SHARE as it stores deliveries, so it either committed first, and its
 * pending ones are among those cancelled, or it sees the application inactive.
 */
async function sairDoHub(id: string): Promise<'removidos' | 'desativados' | undefined> {
  const decisao = await decidirSobTrava(Aplicativo, id, async (a, transaction) => {
    if (!a) return undefined;
    const emUso = (await contagens([a.id], transaction)).get(a.id)!;
    if (!emUso.tipos && !emUso.assinaturas) {
      await a.destroy({ transaction });
      return 'removidos' as const;
    }
    return (await desativar(a, transaction)) ? ('desativados' as const) : undefined;
  });
  if (decisao === 'desativados') await cancelarDoAssinante(id);
  return decisao;
}

/**
 * An application deactivated in identity, made inactive here (sairDoHub's inactive branch) with its
 * name and description as identity has them, in the same commit; whether it was active.
 */
async function desativarNoHub(id: string, dados: { nome: string; descricao: string | null }): Promise<boolean> {
  const desativado = await decidirSobTrava(Aplicativo, id, async (a, transaction) => {
    if (!a) return false;
    await a.update(dados, { transaction });
    return desativar(a, transaction);
  });
  if (desativado) await cancelarDoAssinante(id);
  return desativado;
}

/** Makes an active application inactive, inside the caller's transaction that holds its row; whether it was active. */
async function desativar(a: Aplicativo, transaction: Transaction): Promise<boolean> {
  if (!a.ativo) return false;
  await a.update({ ativo: false }, { transaction });
  return true;
}

/**
 * An inactive application active again in identity: active here, under its row's lock, with what
 * its subscriptions' cancellations left pending (cancelarPendentes) cancelled in the same commit;
 * most of that first, while it does not receive, a page at a time.
 */
async function reativarNoHub(id: string, dados: { nome: string; descricao: string | null }): Promise<void> {
  await cancelarDoAssinante(id);
  const canceladas = await decidirSobTrava(Aplicativo, id, async (a, transaction) => {
    if (!a) return [];
    const eraInativo = !a.ativo;
    await a.update({ ...dados, ativo: true }, { transaction });
    if (!eraInativo) return [];
    const canceladas: [string, Date | null][] = [];
    for (const s of await Assinatura.findAll({ where: { aplicativo_assinante_id: a.id }, attributes: ['id'], transaction })) {
      canceladas.push([s.id, await cancelarPendentes(s.id, transaction)]);
    }
    return canceladas;
  });
  for (const [assinaturaId, canceladasEm] of canceladas) emSegundoPlano(removerJobs(assinaturaId, canceladasEm));
}

/** The pending deliveries of each subscription of an inactive application (made so, committed). */
async function cancelarDoAssinante(aplicativoId: string): Promise<void> {
  for (const s of await Assinatura.findAll({ where: { aplicativo_assinante_id: aplicativoId }, attributes: ['id'] })) {
    emSegundoPlano(removerJobs(s.id, await cancelarPendentesEmPaginas(s.id)));
  }
}

