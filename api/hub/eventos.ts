import { UniqueConstraintError } from 'sequelize';
import { banco } from '../../lib/database';
import { Aplicativo, Assinatura, Entrega, Evento, TipoDeEvento, VersaoDeEvento } from '../../models/hub';
import { novoId } from '../../models/shared/base';
import { logger } from '../../lib/logger';
import { proibido, referenciaInvalida } from '../shared/errors';
import { Principal } from '../shared/principal';
import { enfileirarEntregas } from './entregas';
import { validarDados } from './esquemas';

const log = logger('hub-eventos');

export interface Publicacao {
  tipo: string;
  versao: number;
  dados: unknown;
  id?: string;
}

export interface RespostaDaPublicacao {
  id: string;
  entregas: number;
}

async function publicador(quem: Principal): Promise<Aplicativo> {
  const app = await Aplicativo.findOne({ where: { identificador_no_auth: quem.sub } });
  if (!app || !app.ativo) throw proibido('O aplicativo não está registrado no hub ou está inativo.');
  return app;
}

async function anterior(app: Aplicativo, id: string | undefined): Promise<RespostaDaPublicacao | null> {
  if (!id) return null;
  const e = await Evento.findOne({ where: { aplicativo_origem_id: app.id, id_do_publicador: id }, attributes: ['id', 'entregas'] });
  return e ? { id: e.id, entregas: e.entregas } : null;
}

/**
 * POST /eventos (DESIGN §5): the owner publishes in a version that is not switched off; `dados`
 * follows the version's schema; the event and one delivery per active subscription of that version
 * are stored in one transaction and enqueued before the answer. The same publisher repeating an
 * `id` gets the first answer and creates nothing.
 */
export async function publicarEvento(quem: Principal, p: Publicacao): Promise<RespostaDaPublicacao> {
  const app = await publicador(quem);
  const repetido = await anterior(app, p.id);
  if (repetido) return repetido;
  const tipo = await TipoDeEvento.findOne({ where: { nome: p.tipo }, attributes: ['id', 'aplicativo_id'] });
  if (!tipo) throw referenciaInvalida('tipo', 'Tipo de evento não encontrado.');
  if (tipo.aplicativo_id !== app.id) throw proibido('Só o aplicativo dono do tipo publica seus eventos.');
  const versao = await VersaoDeEvento.findOne({ where: { tipo_de_evento_id: tipo.id, versao: p.versao } });
  if (!versao) throw referenciaInvalida('versao', 'Versão não encontrada para o tipo de evento.');
  if (versao.situacao === 'desligada') throw referenciaInvalida('versao', 'Versão desligada: não aceita novos eventos.');
  validarDados(`${tipo.id}:${versao.versao}:${versao.atualizada_em.getTime()}`, versao.esquema, p.dados);

  const assinaturas = await Assinatura.findAll({
    where: { tipo_de_evento_id: tipo.id, versao_do_esquema: p.versao, ativa: true },
    attributes: ['id'],
  });
  const eventoId = novoId();
  const agora = new Date();
  const entregas = assinaturas.map((a) => ({
    id: novoId(),
    evento_id: eventoId,
    assinatura_id: a.id,
    situacao: 'pendente' as const,
    tentativas: 0,
    proxima_tentativa_em: agora,
  }));
  try {
    await banco('hub').transaction(async (transaction) => {
      await Evento.create(
        {
          id: eventoId,
          aplicativo_origem_id: app.id,
          id_do_publicador: p.id ?? null,
          tipo_de_evento_id: tipo.id,
          versao: p.versao,
          dados: p.dados,
          entregas: entregas.length,
        },
        { transaction },
      );
      if (entregas.length) await Entrega.bulkCreate(entregas, { transaction });
    });
  } catch (err) {
    // the same id published twice at the same moment: the first one wins
    if (err instanceof UniqueConstraintError && p.id) {
      const primeiro = await anterior(app, p.id);
      if (primeiro) return primeiro;
    }
    throw err;
  }
  try {
    await enfileirarEntregas(entregas.map((e) => e.id));
  } catch (err) {
    // stored durably: the sweep of pending deliveries enqueues them once Redis is back
    log.warn({ err: (err as Error).message, evento: eventoId }, 'entregas ficam para a varredura');
  }
  return { id: eventoId, entregas: entregas.length };
}
