import { Op, QueryTypes, Transaction, WhereOptions } from 'sequelize';
import { banco } from '../../lib/database';
import { emSegundoPlano } from '../../lib/lifecycle';
import { Aplicativo, Assinatura, TipoDeEvento, VersaoDeEvento } from '../../models/hub';
import { iso } from '../../models/shared/base';
import { conflito, dadosInvalidos, naoEncontrado, referenciaInvalida } from '../shared/errors';
import { comoConflitoDaRegra, mudarSobTrava } from '../shared/sob-trava';
import { contem, offset, PaginaNumerada } from '../shared/paginacao';
import { entregasNaFilaDeErro } from './contagem';
import { cancelarPendentes, cancelarPendentesEmPaginas, removerJobs } from './entregas';
import { esquecerAssinaturas } from './eventos';

/** SPEC §2 Assinatura. */
export interface AssinaturaJson {
  id: string;
  aplicativo_assinante_id: string;
  aplicativo_assinante_nome: string;
  tipo_de_evento_id: string;
  tipo_de_evento_nome: string;
  versao_do_esquema: number;
  situacao_da_versao: string;
  url_de_destino: string;
  maximo_de_tentativas: number;
  tempo_limite_em_segundos: number;
  ativa: boolean;
  entregas_na_fila_de_erro: number;
  ultima_entrega_em: string | null;
  criada_em: string;
  atualizada_em: string;
}

const incluir = [
  { model: Aplicativo, as: 'assinante', attributes: ['id', 'nome'], paranoid: false, required: true },
  { model: TipoDeEvento, as: 'tipo', attributes: ['id', 'nome'], paranoid: false, required: true },
];

/** SPEC 4.3 rule 1: subscriber name, then event type name. */
const ORDEM: any[] = [
  [{ model: Aplicativo, as: 'assinante' }, 'nome', 'ASC'],
  [{ model: TipoDeEvento, as: 'tipo' }, 'nome', 'ASC'],
  ['id', 'ASC'],
];

async function comoJson(lista: Assinatura[]): Promise<AssinaturaJson[]> {
  if (!lista.length) return [];
  const ids = lista.map((a) => a.id);
  const [naFila, ultimas, versoes] = await Promise.all([
    entregasNaFilaDeErro(ids),
    // the last success is read from the deliveries (no hot row to update per delivery); the column
    // keeps it once the history is purged or replayed. Both in one statement, so one snapshot: a
    // purge or a replay moves it from the deliveries to the column in one transaction. The newest
    // read backwards through entrega_ultima, one entry: a MAX correlated with the row read every
    // delivered entry of the subscription (200,002 index reads for 200,000 against 2)
    banco('hub').query(
      `SELECT a.id, a.ultima_entrega_em AS guardada,
              (SELECT e.entregue_em FROM entrega e WHERE e.assinatura_id = a.id AND e.situacao = 'entregue'
                ORDER BY e.entregue_em DESC LIMIT 1) AS entregue
         FROM assinatura a WHERE a.id IN (?)`,
      { replacements: [ids], type: QueryTypes.SELECT },
    ) as Promise<{ id: string; guardada: Date | null; entregue: Date | null }[]>,
    VersaoDeEvento.findAll({
      where: { [Op.or]: lista.map((a) => ({ tipo_de_evento_id: a.tipo_de_evento_id, versao: a.versao_do_esquema })) },
      attributes: ['tipo_de_evento_id', 'versao', 'situacao'],
    }),
  ]);
  const situacoes = new Map(versoes.map((v) => [`${v.tipo_de_evento_id}:${v.versao}`, v.situacao]));
  const ultimaEntrega = new Map(
    ultimas.map((u) => {
      const datas = [u.guardada, u.entregue].filter((d): d is Date => d !== null).map((d) => new Date(d).getTime());
      return [u.id, datas.length ? new Date(Math.max(...datas)) : null];
    }),
  );
  return lista.map((a) => ({
    id: a.id,
    aplicativo_assinante_id: a.aplicativo_assinante_id,
    aplicativo_assinante_nome: a.assinante!.nome,
    tipo_de_evento_id: a.tipo_de_evento_id,
    tipo_de_evento_nome: a.tipo!.nome,
    versao_do_esquema: a.versao_do_esquema,
    situacao_da_versao: situacoes.get(`${a.tipo_de_evento_id}:${a.versao_do_esquema}`) ?? 'desconhecida',
    url_de_destino: a.url_de_destino,
    maximo_de_tentativas: a.maximo_de_tentativas,
    tempo_limite_em_segundos: a.tempo_limite_em_segundos,
    ativa: a.ativa,
    entregas_na_fila_de_erro: naFila.get(a.id) ?? 0,
    ultima_entrega_em: iso(ultimaEntrega.get(a.id) ?? null),
    criada_em: iso(a.criada_em)!,
    atualizada_em: iso(a.atualizada_em)!,
  }));
}

async function existente(id: string): Promise<Assinatura> {
  const a = await Assinatura.findByPk(id, { include: incluir });
  if (!a) throw naoEncontrado('Assinatura');
  return a;
}

export async function listarAssinaturas(pagina: number, tamanho: number): Promise<PaginaNumerada<AssinaturaJson>> {
  const [total, linhas] = await Promise.all([
    Assinatura.count(),
    Assinatura.findAll({ include: incluir, order: ORDEM, offset: offset(pagina, tamanho), limit: tamanho }),
  ]);
  return { itens: await comoJson(linhas), pagina, tamanho, total };
}

export async function autocompletarAssinaturas(busca: string | undefined, pagina: number, tamanho: number) {
  const where: WhereOptions = busca
    ? { [Op.or]: [{ '$assinante.nome$': { [Op.like]: contem(busca) } }, { '$tipo.nome$': { [Op.like]: contem(busca) } }] }
    : {};
  const [total, linhas] = await Promise.all([
    Assinatura.count({ where, include: incluir }),
    Assinatura.findAll({ where, include: incluir, order: ORDEM, offset: offset(pagina, tamanho), limit: tamanho, subQuery: false }),
  ]);
  const itens = linhas.map((a) => ({
    id: a.id,
    aplicativo_assinante_nome: a.assinante!.nome,
    tipo_de_evento_nome: a.tipo!.nome,
    versao_do_esquema: a.versao_do_esquema,
    ativa: a.ativa,
  }));
  return { itens, pagina, tamanho, total };
}

export async function filtrarAssinaturas(f: { aplicativo_assinante_id?: string; tipo_de_evento_id?: string; ativa?: boolean }) {
  const where: WhereOptions = {};
  if (f.aplicativo_assinante_id) Object.assign(where, { aplicativo_assinante_id: f.aplicativo_assinante_id });
  if (f.tipo_de_evento_id) Object.assign(where, { tipo_de_evento_id: f.tipo_de_evento_id });
  if (f.ativa !== undefined) Object.assign(where, { ativa: f.ativa });
  return comoJson(await Assinatura.findAll({ where, include: incluir, order: ORDEM }));
}

export async function assinaturaPorId(id: string): Promise<AssinaturaJson> {
  return (await comoJson([await existente(id)]))[0];
}

/** SPEC 4.3 rule 7: at most 500 characters, https, or http only for localhost. */
export function conferirUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw dadosInvalidos('url_de_destino inválida.', [{ campo: 'url_de_destino', mensagem: 'não é uma URL' }]);
  }
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && local)) {
    throw dadosInvalidos('url_de_destino deve ser https (http só para localhost).', [
      { campo: 'url_de_destino', mensagem: 'deve ser https (http só para localhost)' },
    ]);
  }
  if (u.username || u.password) {
    throw dadosInvalidos('url_de_destino não pode levar credenciais.', [{ campo: 'url_de_destino', mensagem: 'sem usuário e senha na URL' }]);
  }
}

/**
 * SPEC 4.3 rule 6 and 9: the version exists for the type and is not switched off. Read FOR SHARE:
 * a switch-off waits for the subscription being stored, or is seen by it.
 */
async function conferirVersao(tipoId: string, versao: number, transaction: Transaction): Promise<void> {
  const v = await VersaoDeEvento.findOne({ where: { tipo_de_evento_id: tipoId, versao }, attributes: ['situacao'], transaction, lock: transaction.LOCK.SHARE });
  if (!v) throw referenciaInvalida('versao_do_esquema', 'Versão não encontrada para o tipo de evento.');
  if (v.situacao === 'desligada') throw referenciaInvalida('versao_do_esquema', 'Versão desligada: não aceita novas assinaturas.');
}

export interface CriarAssinatura {
  aplicativo_assinante_id: string;
  tipo_de_evento_id: string;
  url_de_destino: string;
  versao_do_esquema: number;
  ativa?: boolean | null;
  maximo_de_tentativas?: number | null;
  tempo_limite_em_segundos?: number | null;
}

export async function criarAssinatura(e: CriarAssinatura): Promise<AssinaturaJson> {
  conferirUrl(e.url_de_destino);
  // the rows read FOR SHARE stay as read until the subscription is stored: the application sync
  // and DELETE /tipo_de_evento lock them FOR UPDATE before deciding, so they wait for this one
  const id = await banco('hub').transaction(async (transaction) => {
    const app = await Aplicativo.findByPk(e.aplicativo_assinante_id, { transaction, lock: transaction.LOCK.SHARE });
    if (!app || !app.ativo) throw referenciaInvalida('aplicativo_assinante_id', 'Aplicativo não encontrado ou inativo.');
    const tipo = await TipoDeEvento.findByPk(e.tipo_de_evento_id, { attributes: ['id'], transaction, lock: transaction.LOCK.SHARE });
    if (!tipo) throw referenciaInvalida('tipo_de_evento_id', 'Tipo de evento não encontrado.');
    await conferirVersao(tipo.id, e.versao_do_esquema, transaction);
    const par = { aplicativo_assinante_id: app.id, tipo_de_evento_id: tipo.id };
    const jaAssina = () => conflito('O aplicativo já assina este tipo de evento; para mudar a versão, altere a assinatura existente.');
    if (await Assinatura.findOne({ where: par, attributes: ['id'], transaction })) throw jaAssina();
    // a creation of the same pair committed after the check above: the unique key tells
    const a = await Assinatura.create(
      {
        ...par,
        url_de_destino: e.url_de_destino,
        versao_do_esquema: e.versao_do_esquema,
        ativa: e.ativa ?? true,
        maximo_de_tentativas: e.maximo_de_tentativas ?? 5,
        tempo_limite_em_segundos: e.tempo_limite_em_segundos ?? 5,
      },
      { transaction },
    ).catch(comoConflitoDaRegra(jaAssina));
    return a.id;
  });
  esquecerAssinaturas();
  return assinaturaPorId(id);
}

export type AtualizarAssinatura = Partial<Omit<CriarAssinatura, 'aplicativo_assinante_id' | 'tipo_de_evento_id'>>;

/** SPEC 4.3 rule 9: partial; keeping the current version is always accepted. */
export async function atualizarAssinatura(id: string, e: AtualizarAssinatura): Promise<AssinaturaJson> {
  // input first, then existence (DESIGN §10 order of checks)
  if (e.url_de_destino != null) conferirUrl(e.url_de_destino);
  await existente(id);
  const mudancas: Record<string, unknown> = {};
  for (const campo of ['url_de_destino', 'versao_do_esquema', 'ativa', 'maximo_de_tentativas', 'tempo_limite_em_segundos'] as const) {
    if (e[campo] !== undefined && e[campo] !== null) mudancas[campo] = e[campo];
  }
  // a reactivation cancels what a cancellation left pending (cancelarPendentes, under the lock):
  // most of it first, while the subscription does not receive, a page at a time
  if (e.ativa === true) emSegundoPlano(removerJobs(id, await cancelarPendentesEmPaginas(id)));
  // read again under lock: a change or deletion committed since the check above is what this one
  // follows. READ COMMITTED: cancelarPendentes locks the pending deliveries only, not the index gaps
  // beside them, where a worker recording a delivery's end writes (the two would wait on each other)
  const { ativa, canceladasEm } = await mudarSobTrava(Assinatura, id, 'Assinatura', async (a, transaction) => {
    if (e.versao_do_esquema != null && e.versao_do_esquema !== a.versao_do_esquema) {
      await conferirVersao(a.tipo_de_evento_id, e.versao_do_esquema, transaction);
    }
    const reativada = !a.ativa && mudancas.ativa === true;
    await a.update(mudancas, { transaction });
    return { ativa: a.ativa, canceladasEm: reativada ? await cancelarPendentes(a.id, transaction) : null };
  });
  esquecerAssinaturas();
  emSegundoPlano(removerJobs(id, ativa ? canceladasEm : await cancelarPendentesEmPaginas(id)));
  return assinaturaPorId(id);
}

/** SPEC §3: logical deletion; pending deliveries cancelled at once; history kept until retention. */
export async function deletarAssinatura(id: string): Promise<void> {
  await existente(id);
  await mudarSobTrava(Assinatura, id, 'Assinatura', (a, transaction) => a.destroy({ transaction }));
  esquecerAssinaturas();
  emSegundoPlano(removerJobs(id, await cancelarPendentesEmPaginas(id)));
}
