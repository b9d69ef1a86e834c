import { Cargo, Funcao, Setor } from '../../models/identity';
import { iso } from '../../models/shared/base';
import { conflito } from '../shared/errors';

/** Sectors, positions and functions (DESIGN §10): a unique name each. */
export type TipoDeCadastro = 'setor' | 'cargo' | 'funcao';
const MODELOS = { setor: Setor, cargo: Cargo, funcao: Funcao };

type Cadastro = Setor | Cargo | Funcao;
const cadastroJson = (c: Cadastro) => ({ id: c.id, nome: c.nome, criado_em: iso(c.criado_em)!, atualizado_em: iso(c.atualizado_em)! });

export async function listarCadastros(tipo: TipoDeCadastro) {
  const linhas: Cadastro[] = await MODELOS[tipo].findAll({
    order: [
      ['nome', 'ASC'],
      ['id', 'ASC'],
    ],
  });
  return linhas.map(cadastroJson);
}

export async function criarCadastro(tipo: TipoDeCadastro, nome: string) {
  const modelo = MODELOS[tipo] as typeof Setor;
  if (await modelo.findOne({ where: { nome }, attributes: ['id'] })) throw conflito(`Já existe ${tipo} com este nome.`);
  return cadastroJson(await modelo.create({ nome }));
}
