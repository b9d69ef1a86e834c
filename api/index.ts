import { ConfigError } from '../config';
import { NomeDoServico } from '../config/services';
import { files } from './files';
import { hub } from './hub';
import { identity } from './identity';
import { intranet } from './intranet';
import { leads } from './leads';
import { sales } from './sales';
import { Servico } from './shared/servico';

/** Services built so far; `npm start` runs all of them. */
export const SERVICOS_DA_SUITE: Partial<Record<NomeDoServico, Servico>> = { identity, leads, intranet, hub, sales, files };

export function servico(nome: string): Servico {
  const s = Object.hasOwn(SERVICOS_DA_SUITE, nome) ? SERVICOS_DA_SUITE[nome as NomeDoServico] : undefined;
  if (!s) throw new ConfigError(`unknown service "${nome}"; known: ${Object.keys(SERVICOS_DA_SUITE).join(', ')}`);
  return s;
}
