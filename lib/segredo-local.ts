import { randomBytes } from 'node:crypto';
import { ModelStatic } from 'sequelize';
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
  // two processes starting together: the first insert wins, both read the winner
  await o.modelo.bulkCreate([{ nome: o.nome, valor: randomBytes(32).toString('base64url') } as never], { ignoreDuplicates: true });
  const guardado = await o.modelo.findByPk(o.nome);
  if (!guardado) throw new Error(`secret ${o.nome} not stored`);
  return Buffer.from(guardado.valor, 'utf8');
}
