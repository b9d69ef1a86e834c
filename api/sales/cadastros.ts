import { Op, Transaction, UniqueConstraintError, WhereOptions } from 'sequelize';
import { Model, ModelCtor } from 'sequelize-typescript';
import { iso } from '../../models/shared/base';
import { conflito, naoEncontrado } from '../shared/errors';
import { mudarSobTrava } from '../shared/sob-trava';
import { contem, offset, PaginaNumerada } from '../shared/paginacao';

/**
 * The small records conversations link to (customers, robots): a page by name with a search,
 * one by id, create, partial update and logical deletion. Each is described by its model, the
 * column it is named and sorted by, the columns the search reads, and its writable fields.
 */
export interface DefinicaoDeCadastro<M extends Model> {
  modelo: ModelCtor<M>;
  /** "Cliente", "Robô": the subject of a not-found answer */
  oQue: string;
  colunaDoNome: string;
  colunasDaBusca: string[];
  /**
   * of those, columns that hold a normal form (a CNPJ: upper case, without its mask): the search
   * as that column is compared with it, or null when it cannot match there (the database also
   * refuses to compare an ASCII column with text outside ASCII)
   */
  formaDaBusca?: Record<string, (busca: string) => string | null>;
  campos: string[];
  /** BIGINT columns, which the driver reads as text: answered as numbers */
  numeros?: string[];
  /** after any write (caches of the records) */
  aoMudar?: () => void;
  /** the table's unique keys, by name, to the field whose repeat each refuses and the 409's message */
  unicos?: Record<string, { campo: string; mensagem: string }>;
}

export function criarCadastro<M extends Model>(d: DefinicaoDeCadastro<M>) {
  const comoJson = (m: M) => {
    const valores = m.get({ plain: true }) as Record<string, unknown>;
    const json: Record<string, unknown> = { id: valores.id };
    for (const c of d.campos) json[c] = valores[c] ?? null;
    for (const c of d.numeros ?? []) if (json[c] !== null) json[c] = Number(json[c]);
    return { ...json, criado_em: iso(valores.criado_em as Date)!, atualizado_em: iso(valores.atualizado_em as Date)! };
  };
  type Json = ReturnType<typeof comoJson>;

  // the database's unique key decides, so of two writes of one value at once only one succeeds; a
  // key not described here keeps the generic 409
  const recusarRepetido = (err: unknown): never => {
    const unico = err instanceof UniqueConstraintError ? Object.keys(err.fields).map((chave) => d.unicos?.[chave]).find(Boolean) : undefined;
    throw unico ? conflito(unico.mensagem, unico.campo) : err;
  };

  async function existente(id: string): Promise<M> {
    const m = await d.modelo.findByPk(id);
    if (!m) throw naoEncontrado(d.oQue);
    return m;
  }

  return {
    async listar(pagina: number, tamanho: number, busca?: string): Promise<PaginaNumerada<Json>> {
      const naColuna = (c: string) => (busca === undefined ? null : d.formaDaBusca?.[c] ? d.formaDaBusca[c](busca) : busca);
      const condicoes = d.colunasDaBusca.flatMap((c) => {
        const texto = naColuna(c);
        return texto === null ? [] : [{ [c]: { [Op.like]: contem(texto) } }];
      });
      const where: WhereOptions = busca ? { [Op.or]: condicoes } : {};
      const { rows, count } = await d.modelo.findAndCountAll({
        where,
        order: [
          [d.colunaDoNome, 'ASC'],
          ['id', 'ASC'],
        ],
        offset: offset(pagina, tamanho),
        limit: tamanho,
      });
      return { itens: rows.map(comoJson), pagina, tamanho, total: count };
    },
    async porId(id: string): Promise<Json> {
      return comoJson(await existente(id));
    },
    /**
     * true when the id names a record that is not deleted (a conversation may link to it); inside
     * a transaction the record is read with a shared lock, so its deletion waits for the link
     */
    async existe(id: string, transaction?: Transaction): Promise<boolean> {
      const m = await d.modelo.findOne({ where: { id } as WhereOptions, attributes: ['id'], transaction, lock: transaction?.LOCK.SHARE });
      return m !== null;
    },
    async criar(dados: Record<string, unknown>): Promise<Json> {
      const m = await d.modelo.create(dados as never).catch(recusarRepetido);
      d.aoMudar?.();
      return comoJson(m);
    },
    // changes and deletions read the record again under lock: of two at once, the second sees the
    // first (a change after a deletion answers 404 instead of writing to the deleted record)
    async atualizar(id: string, dados: Record<string, unknown>): Promise<Json> {
      const m = await mudarSobTrava(d.modelo, id, d.oQue, (m, transaction) => m.update(dados, { transaction })).catch(recusarRepetido);
      d.aoMudar?.();
      return comoJson(m);
    },
    async deletar(id: string): Promise<void> {
      await mudarSobTrava(d.modelo, id, d.oQue, async (m, transaction) => {
        await m.destroy({ transaction });
      });
      d.aoMudar?.();
    },
  };
}
