import { Connection } from 'mysql2/promise';
import { NomeDoServico } from '../../config/services';
import { novaConexao } from '../../lib/database';

export const dormir = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Falso = false | 0 | '' | null | undefined;

/**
 * Polls `obter` every `intervaloMs` until it returns something truthy, or fails after `prazoMs`,
 * counted on the monotonic clock: a test that holds Date still still gets its failure.
 */
export async function esperarAte<T>(obter: () => Promise<T | Falso> | T | Falso, descricao: string, prazoMs = 10_000, intervaloMs = 40): Promise<T> {
  const limite = performance.now() + prazoMs;
  for (;;) {
    const valor = await obter();
    if (valor) return valor as T;
    if (performance.now() > limite) throw new Error(`${descricao}: not met within ${prazoMs} ms`);
    await dormir(intervaloMs);
  }
}

/**
 * Waits until at least `quantas` other connections of this database run a statement matching one
 * of `padroes` (LIKE): another connection's statement blocked where a test holds it.
 */
export function esperarOutraConexao(conexao: Connection, descricao: string, padroes: string[], quantas = 1, prazoMs = 10_000) {
  return esperarAte(async () => {
    const [linhas] = await conexao.query(
      `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
        AND (${padroes.map(() => 'INFO LIKE ?').join(' OR ')})`,
      padroes,
    );
    return Number((linhas as { n: number }[])[0].n) >= quantas;
  }, descricao, prazoMs);
}

/**
 * Waits until at least `quantas` transactions of this database wait for a row lock (InnoDB's
 * `LOCK WAIT`): a statement sent is not yet one blocked where the test holds it. Read every
 * 150 ms: the server refreshes what it shows of transactions only when read 100 ms or more after
 * the last time, so a quicker poll would see the first answer for ever.
 */
export function esperarTravaEsperada(conexao: Connection, descricao: string, quantas = 1) {
  return esperarAte(async () => {
    const [linhas] = await conexao.query(
      `SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
        WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()`,
    );
    return Number((linhas as { n: number }[])[0].n) >= quantas;
  }, descricao, 10_000, 150);
}

/**
 * A change another writer commits while `pedido` waits for the row that writer holds: the test's
 * connection locks row `id` of `tabela` (FOR UPDATE), starts `pedido`, waits until a statement of
 * another connection matching `padroes` is under way (the request, waiting on the row), makes the
 * change (`mudar`) and commits. Answers what `pedido` answers.
 */
export async function comMudancaEmCurso<T>(
  servico: NomeDoServico,
  tabela: string,
  id: string,
  padroes: string[],
  mudar: (conexao: Connection) => Promise<unknown>,
  pedido: () => Promise<T>,
): Promise<T> {
  const conexao = await novaConexao(servico);
  try {
    await conexao.query('START TRANSACTION');
    await conexao.query(`SELECT id FROM ${tabela} WHERE id = ? FOR UPDATE`, [id]);
    const resposta = pedido();
    resposta.catch(() => undefined);
    await esperarOutraConexao(conexao, `the request waiting on ${tabela}`, padroes);
    await mudar(conexao);
    await conexao.query('COMMIT');
    return await resposta;
  } finally {
    await conexao.end();
  }
}
