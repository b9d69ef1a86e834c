import { NomeDoServico } from '../../config/services';
import { abrirBanco, apagarBanco, lerLinhas, Migracao, migrar } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';

/**
 * A service's database as it stood before migration `nome` (for tests of one migration on a
 * database already in use): `abrir` creates it and runs the migrations before that one; `q` reads
 * and writes it; `apagar` closes the connections and drops it. `indice` is the migration's place.
 */
export function bancoAntesDaMigracao(servico: NomeDoServico, migracoes: Migracao[], nome: string) {
  const sequelize = { config: { database: '' } };
  const indice = migracoes.findIndex((m) => m.name === nome);
  if (indice < 0) throw new Error(`no migration ${nome} for ${servico}`);
  return {
    indice,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    q: (sql: string, valores: unknown[] = []) => lerLinhas<Record<string, any>>(sequelize, sql, valores),
    async abrir(): Promise<void> {
      sequelize.config.database = (await abrirBanco(servico, [])).config.database!;
      await migrar(servico, migracoes.slice(0, indice));
    },
    async apagar(): Promise<void> {
      await encerrar();
      await apagarBanco(servico);
    },
  };
}
