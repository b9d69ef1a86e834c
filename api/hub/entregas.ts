import { Op, WhereOptions } from 'sequelize';
import { logger } from '../../lib/logger';
import { Aplicativo, Assinatura, Entrega, Evento, TentativaDeEntrega, TipoDeEvento } from '../../models/hub';
import { SituacaoDaEntrega } from '../../models/hub/entrega';
import { iso } from '../../models/shared/base';
import { fila } from '../../queues/fila';
import { atrasoDaProximaTentativa, FalhaDeTentativa, filaHubEntrega } from '../../queues/hub-entrega';
import { conflito, naoEncontrado } from '../shared/errors';
import { offset, PaginaNumerada } from '../shared/paginacao';
import { assinarEntrega } from './assinador';
import { enviarPost } from './envio';

const log = logger('hub-entregas');

/** Enqueues deliveries already stored (job id = delivery id: adding twice is a no-op). */
export async function enfileirarEntregas(ids: string[]): Promise<void> {
  if (!ids.length) return;
  await fila(filaHubEntrega).addBulk(ids.map((id) => ({ name: 'entregar', data: { id }, opts: { jobId: id } })));
}

/** An application's identity id never changes: remembered for the life of the process. */
const identificadores = new Map<string, string>();
async function identificadorNoAuth(aplicativoId: string): Promise<string> {
  const guardado = identificadores.get(aplicativoId);
  if (guardado) return guardado;
  const app = await Aplicativo.findByPk(aplicativoId, { paranoid: false, attributes: ['identificador_no_auth'] });
  if (!app) throw new Error(`hub application ${aplicativoId} not found`);
  identificadores.set(aplicativoId, app.identificador_no_auth);
  return app.identificador_no_auth;
}

export type ResultadoDaEntrega = SituacaoDaEntrega | 'ignorada';

/**
 * One attempt of one delivery (DESIGN §5). Sends only while the delivery is pending and its
 * subscription active; records the attempt; throws `FalhaDeTentativa` while attempts remain so the
 * queue retries on the schedule; puts the delivery in the error queue after the last one.
 */
export async function tentarEntrega(entregaId: string): Promise<ResultadoDaEntrega> {
  const entrega = await Entrega.findByPk(entregaId, {
    include: [
      { model: Evento, as: 'evento' },
      {
        model: Assinatura,
        as: 'assinatura',
        paranoid: false,
        include: [{ model: TipoDeEvento, as: 'tipo', attributes: ['nome'], paranoid: false }],
      },
    ],
  });
  if (!entrega || entrega.situacao !== 'pendente') return 'ignorada';
  const assinatura = entrega.assinatura!;
  const evento = entrega.evento!;
  if (assinatura.deletada_em || !assinatura.ativa) {
    await entrega.update({ situacao: 'cancelada', proxima_tentativa_em: null });
    return 'cancelada';
  }
  const audiencia = await identificadorNoAuth(assinatura.aplicativo_assinante_id);
  const corpo = JSON.stringify({
    id: evento.id,
    tipo: assinatura.tipo!.nome,
    versao: evento.versao,
    aplicativo_origem_id: await identificadorNoAuth(evento.aplicativo_origem_id),
    aplicativo_assinante_id: audiencia,
    criado_em: iso(evento.criado_em),
    dados: evento.dados,
  });
  const cabecalhos = await assinarEntrega({
    webhookId: entrega.id,
    corpo,
    audiencia,
    assinaturaId: assinatura.id,
    tipo: assinatura.tipo!.nome,
    versao: evento.versao,
  });
  const iniciadaEm = new Date();
  const r = await enviarPost(assinatura.url_de_destino, corpo, { ...cabecalhos }, assinatura.tempo_limite_em_segundos * 1000);
  const numero = entrega.tentativas + 1;
  await TentativaDeEntrega.create({
    entrega_id: entrega.id,
    numero,
    iniciada_em: iniciadaEm,
    duracao_ms: r.duracaoMs,
    status_http: r.status,
    erro: r.erro?.slice(0, 1000) ?? null,
    resposta: r.resposta,
  });
  if (!r.erro) {
    const agora = new Date();
    // recorded even if the subscription was deactivated during the attempt: the subscriber has it
    await entrega.update({ situacao: 'entregue', tentativas: numero, entregue_em: agora, proxima_tentativa_em: null, ultimo_erro: null });
    // monotonic: concurrent deliveries never move it back
    await Assinatura.update(
      { ultima_entrega_em: agora },
      { where: { id: assinatura.id, [Op.or]: [{ ultima_entrega_em: null }, { ultima_entrega_em: { [Op.lt]: agora } }] }, paranoid: false },
    );
    return 'entregue';
  }
  const esgotou = numero >= assinatura.maximo_de_tentativas;
  const falha = new FalhaDeTentativa(r.erro, r.retryAfterMs);
  const ultimoErro = r.erro.slice(0, 1000);
  const proxima = esgotou ? null : new Date(Date.now() + atrasoDaProximaTentativa(numero, undefined, falha));
  const [seguiaPendente] = await Entrega.update(
    { situacao: esgotou ? 'fila_de_erro' : 'pendente', tentativas: numero, proxima_tentativa_em: proxima, ultimo_erro: ultimoErro },
    { where: { id: entrega.id, situacao: 'pendente' } },
  );
  // cancelled while this attempt was in flight (SPEC §6 rule 6): it stays cancelled and is not retried
  if (!seguiaPendente) return 'cancelada';
  if (esgotou) return 'fila_de_erro';
  throw falha;
}

/** SPEC §6 rule 6: pending deliveries of a deactivated or deleted subscription stop at once. */
export async function cancelarPendentes(assinaturaId: string): Promise<number> {
  const pendentes = await Entrega.findAll({ where: { assinatura_id: assinaturaId, situacao: 'pendente' }, attributes: ['id'] });
  if (!pendentes.length) return 0;
  const ids = pendentes.map((e) => e.id);
  const [n] = await Entrega.update({ situacao: 'cancelada', proxima_tentativa_em: null }, { where: { id: ids, situacao: 'pendente' } });
  // the jobs would find the delivery cancelled anyway; removing them frees Redis of waiting retries
  void removerJobs(ids);
  return n;
}

async function removerJobs(ids: string[]): Promise<void> {
  const q = fila(filaHubEntrega);
  for (let i = 0; i < ids.length; i += 100) {
    await Promise.all(ids.slice(i, i + 100).map((id) => q.remove(id).catch(() => 0)));
  }
}

/** Deliveries still pending whose job is gone (Redis lost it, or it was never added) go back to the queue. */
export async function reenfileirarEsquecidas(): Promise<number> {
  const esquecidas = await Entrega.findAll({
    where: { situacao: 'pendente', proxima_tentativa_em: { [Op.lt]: new Date(Date.now() - 120_000) } },
    attributes: ['id'],
    limit: 5000,
  });
  await enfileirarEntregas(esquecidas.map((e) => e.id));
  if (esquecidas.length) log.info({ quantidade: esquecidas.length }, 'entregas reenfileiradas');
  return esquecidas.length;
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

export async function listarEntregas(
  f: { assinatura_id?: string; situacao?: SituacaoDaEntrega },
  pagina: number,
  tamanho: number,
): Promise<PaginaNumerada<EntregaJson>> {
  const where: WhereOptions = {};
  if (f.assinatura_id) Object.assign(where, { assinatura_id: f.assinatura_id });
  if (f.situacao) Object.assign(where, { situacao: f.situacao });
  const { rows, count } = await Entrega.findAndCountAll({
    where,
    order: [
      ['criada_em', 'DESC'],
      ['id', 'DESC'],
    ],
    offset: offset(pagina, tamanho),
    limit: tamanho,
  });
  return { itens: rows.map(entregaJson), pagina, tamanho, total: count };
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

/** Replay: a delivery in the error queue (or already delivered) starts a new round of attempts. */
async function reenviar(entregas: Entrega[]): Promise<void> {
  const ids = entregas.map((e) => e.id);
  await Entrega.update({ situacao: 'pendente', tentativas: 0, proxima_tentativa_em: new Date(), ultimo_erro: null }, { where: { id: ids } });
  const q = fila(filaHubEntrega);
  // a finished job of the same id may still be kept: remove it so the new one is accepted
  await Promise.all(ids.map((id) => q.remove(id).catch(() => 0)));
  await enfileirarEntregas(ids);
}

async function assinaturaAtiva(id: string): Promise<void> {
  const a = await Assinatura.findByPk(id, { attributes: ['id', 'ativa'] });
  if (!a || !a.ativa) throw conflito('A assinatura está inativa ou foi removida: reative-a antes de reenviar.');
}

export async function reenviarEntrega(id: string): Promise<EntregaJson> {
  const e = await Entrega.findByPk(id);
  if (!e) throw naoEncontrado('Entrega');
  if (e.situacao === 'pendente') throw conflito('A entrega ainda está pendente.');
  if (e.situacao === 'cancelada') throw conflito('A entrega foi cancelada com a assinatura.');
  await assinaturaAtiva(e.assinatura_id);
  await reenviar([e]);
  await e.reload();
  return entregaJson(e);
}

export async function reenviarFalhas(assinaturaId: string): Promise<{ reenviadas: number }> {
  if (!(await Assinatura.findByPk(assinaturaId, { attributes: ['id'] }))) throw naoEncontrado('Assinatura');
  await assinaturaAtiva(assinaturaId);
  const falhas = await Entrega.findAll({ where: { assinatura_id: assinaturaId, situacao: 'fila_de_erro' }, attributes: ['id'] });
  for (let i = 0; i < falhas.length; i += 1000) await reenviar(falhas.slice(i, i + 1000));
  return { reenviadas: falhas.length };
}

/** Retention (DESIGN §5): finished deliveries, their attempts and events older than `dias` go, in batches. */
export async function purgarHistorico(dias: number): Promise<{ entregas: number; eventos: number }> {
  const limite = new Date(Date.now() - dias * 86_400_000);
  let entregas = 0;
  for (;;) {
    const velhas = await Entrega.findAll({
      where: { criada_em: { [Op.lt]: limite }, situacao: { [Op.ne]: 'pendente' } },
      attributes: ['id'],
      limit: 5000,
    });
    if (!velhas.length) break;
    const ids = velhas.map((e) => e.id);
    await TentativaDeEntrega.destroy({ where: { entrega_id: ids } });
    entregas += await Entrega.destroy({ where: { id: ids } });
  }
  // events go once none of their deliveries is left; walked in id order so kept ones are passed over
  let eventos = 0;
  let depoisDe = '';
  for (;;) {
    const velhos = await Evento.findAll({
      where: { criado_em: { [Op.lt]: limite }, id: { [Op.gt]: depoisDe } },
      attributes: ['id'],
      order: [['id', 'ASC']],
      limit: 5000,
    });
    if (!velhos.length) break;
    depoisDe = velhos[velhos.length - 1].id;
    const comEntregas = new Set(
      (await Entrega.findAll({ where: { evento_id: velhos.map((e) => e.id) }, attributes: ['evento_id'] })).map((e) => e.evento_id),
    );
    const ids = velhos.map((e) => e.id).filter((id) => !comEntregas.has(id));
    if (ids.length) eventos += await Evento.destroy({ where: { id: ids } });
  }
  return { entregas, eventos };
}
