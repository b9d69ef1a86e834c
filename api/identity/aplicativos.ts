import { randomBytes } from 'node:crypto';
import { Transaction } from 'sequelize';
import { Aplicativo } from '../../models/identity';
import { iso } from '../../models/shared/base';
import { conflito, naoEncontrado } from '../shared/errors';
import { mudarSobTrava } from '../shared/sob-trava';
import { offset, PaginaNumerada } from '../shared/paginacao';
import { hashDoSegredo } from './login';
import { titularMudou } from './titulares';

export interface AplicativoJson {
  id: string;
  client_id: string;
  nome: string;
  descricao: string | null;
  ativo: boolean;
  criado_em: string;
  atualizado_em: string;
}

export function aplicativoJson(a: Aplicativo): AplicativoJson {
  return {
    id: a.id,
    client_id: a.id,
    nome: a.nome,
    descricao: a.descricao,
    ativo: a.ativo,
    criado_em: iso(a.criado_em)!,
    atualizado_em: iso(a.atualizado_em)!,
  };
}

/** 256 random bits, shown once; only its hash is kept. */
export const novoSegredo = () => randomBytes(32).toString('base64url');

/**
 * What replacing an application's secret writes: the new one's hash, and the moment before which
 * identity refuses the application's tokens (login.ts), those issued on the old secret.
 */
export const segredoTrocado = (segredo: string) => ({ segredo_hash: hashDoSegredo(segredo), tokens_validos_desde: new Date() });

async function existente(id: string): Promise<Aplicativo> {
  const a = await Aplicativo.findByPk(id);
  if (!a) throw naoEncontrado('Aplicativo');
  return a;
}

export async function listarAplicativos(pagina: number, tamanho: number): Promise<PaginaNumerada<AplicativoJson>> {
  const { rows, count } = await Aplicativo.findAndCountAll({
    order: [
      ['nome', 'ASC'],
      ['id', 'ASC'],
    ],
    offset: offset(pagina, tamanho),
    limit: tamanho,
  });
  return { itens: rows.map(aplicativoJson), pagina, tamanho, total: count };
}

export async function aplicativoPorId(id: string): Promise<AplicativoJson> {
  return aplicativoJson(await existente(id));
}

export async function criarAplicativo(e: { nome: string; descricao?: string | null }) {
  const client_secret = novoSegredo();
  const a = await Aplicativo.create({ nome: e.nome, descricao: e.descricao || null, segredo_hash: hashDoSegredo(client_secret) });
  return { ...aplicativoJson(a), client_secret };
}

/**
 * Changes, a new secret and deletion read the application again under lock: of two at once, the
 * second sees the first (a change after a deletion answers 404, never a new secret for a deleted
 * application).
 */
async function sobTrava<T>(id: string, mudar: (a: Aplicativo, transaction: Transaction) => Promise<T>): Promise<T> {
  const mudado = await mudarSobTrava(Aplicativo, id, 'Aplicativo', mudar);
  await titularMudou('aplicativo', id);
  return mudado;
}

export async function atualizarAplicativo(id: string, e: { nome?: string; descricao?: string | null; ativo?: boolean }) {
  const a = await sobTrava(id, (a, transaction) => {
    if (e.ativo === false && a.servico_da_suite) throw conflito('Um aplicativo da própria suíte não pode ser desativado.');
    // an empty description is no description
    const mudancas = e.descricao === '' ? { ...e, descricao: null } : e;
    // switched off, its tokens end for good, as on a new secret: switched on again, it gets new ones
    // (the ones issued before would otherwise be taken again for the rest of their hour)
    return a.update(e.ativo === false && a.ativo ? { ...mudancas, tokens_validos_desde: new Date() } : mudancas, { transaction });
  });
  return aplicativoJson(a);
}

/** A new secret replaces the old one at once: the old one, and at identity the tokens it got, stop working. */
export async function renovarSegredo(id: string) {
  const client_secret = novoSegredo();
  const a = await sobTrava(id, (a, transaction) => a.update(segredoTrocado(client_secret), { transaction }));
  return { ...aplicativoJson(a), client_secret };
}

export async function deletarAplicativo(id: string): Promise<void> {
  await sobTrava(id, async (a, transaction) => {
    if (a.servico_da_suite) throw conflito('Um aplicativo da própria suíte não pode ser removido.');
    await a.destroy({ transaction });
  });
}
