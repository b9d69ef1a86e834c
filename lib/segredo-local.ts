import { randomBytes } from 'node:crypto';
import { ModelStatic, QueryTypes, Sequelize } from 'sequelize';
import { Model } from 'sequelize-typescript';
import { config, ConfigError } from '../config';

/** A table of a service's generated secrets: `nome` and `valor` (see models/files, models/sales). */
type ModeloDeSegredo = ModelStatic<Model & { nome: string; valor: string }>;

/**
 * A key a service needs on every process (a signing key, an encryption key): the environment
 * variable when set. In LOCALHOST without it, one is generated on first start and kept in the
 * service's own database, where every process finds the same; elsewhere its absence stops the
 * service, naming the variable.
 */
export async function segredoDoServico(o: {
  doAmbiente: string | undefined;
  variavel: string;
  modelo: ModeloDeSegredo;
  nome: string;
}): Promise<Buffer> {
  if (o.doAmbiente) return Buffer.from(o.doAmbiente, 'utf8');
  if (config().ambiente !== 'LOCALHOST') throw new ConfigError(`invalid configuration: ${o.variavel} required outside LOCALHOST`);
  return segredoGerado(o.modelo.sequelize!, o.modelo.getTableName() as string, o.nome);
}

/**
 * A random key kept under `nome` in `tabela` (`nome`, `valor`, `criado_em`) of a service's
 * database: made by the first process that asks, the same for every process after.
 */
export async function segredoGerado(sequelize: Sequelize, tabela: string, nome: string): Promise<Buffer> {
  // two processes at once: the first insert wins, both read the winner
  await sequelize.query(`INSERT IGNORE INTO ${tabela} (nome, valor, criado_em) VALUES (?, ?, NOW(3))`, {
    replacements: [nome, randomBytes(32).toString('base64url')],
  });
  const [guardado] = await sequelize.query<{ valor: string }>(`SELECT valor FROM ${tabela} WHERE nome = ?`, { replacements: [nome], type: QueryTypes.SELECT });
  if (!guardado) throw new Error(`secret ${nome} not stored`);
  return Buffer.from(guardado.valor, 'utf8');
}
