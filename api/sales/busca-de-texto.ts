import { config } from '../../config';
import { banco, emTransacao, lerDemorado, nomeDoBanco, novaConexao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { contem } from '../shared/paginacao';

/**
 * `texto` of GET /conversa/filtro (SPEC 4.6 rule 4): a substring of any message of the
 * conversation, in any case.
 *
 * A word index (InnoDB FULLTEXT) cannot find a substring inside a word, and reading the messages
 * costs about a second per two million. Where the database has MariaDB's Mroonga engine, a copy of
 * each message's text lives in a Mroonga table indexed by bigrams (every two characters), kept by
 * triggers on conversa_mensagem; a phrase of bigrams finds the substring, with case and accents
 * folded as the messages' collation folds them. Each message the index finds is checked again with
 * LIKE against conversa_mensagem, so the answer is exactly the substring search, and a copy left
 * behind by a rolled-back write (Mroonga keeps no transactions) finds nothing. A rolled-back
 * delete or edit is repaired by its writer (recopiarConversas).
 *
 * Without the engine, or with SALES_BUSCA_DE_TEXTO=varredura, the messages are read conversation
 * by conversation, most recent first, until 500 match (docs/decisoes.md, Sales).
 */

const log = logger('sales-busca');

const TABELA = 'conversa_mensagem_busca';

export type ModoDaBusca = 'indice' | 'varredura';

let modo: ModoDaBusca = 'varredura';

export const modoDaBusca = (): ModoDaBusca => modo;

/**
 * At every start of a process that opens sales, under a named lock (processes starting together
 * build it once). With the index wanted and the engine present, the table and its triggers are
 * built when either is missing or the last build did not finish. Otherwise (`varredura`, or a
 * server without the engine) the triggers and the table are removed: the triggers would make
 * every message write depend on a table nobody reads, or fail it outright without the engine.
 * Any failure here leaves the text search reading the messages; it never stops the service. A
 * failure during this process's own build removes the triggers it may have left behind.
 */
export async function prepararBuscaDeTexto(
  pedido: ModoDaBusca = config().sales.buscaDeTexto,
  opcoes: OpcoesDaConstrucao = {},
): Promise<ModoDaBusca> {
  modo = 'varredura';
  let conexao: Conexao | undefined;
  let construindo = false;
  try {
    conexao = await novaConexao('sales');
    const mroonga = pedido === 'indice' && (await temMroonga(conexao));
    if (pedido === 'indice' && !mroonga) log.warn('sem o motor Mroonga no banco: `texto` lê as mensagens (sem índice)');
    const [[trava]] = (await conexao.query('SELECT GET_LOCK(?, ?) AS obtida', [`${TABELA}_${nomeDoBanco('sales')}`.slice(0, 64), opcoes.esperaDaTravaS ?? 600])) as any;
    if (Number(trava.obtida) !== 1) throw new Error('named lock of the text index not obtained');
    if (!mroonga) await apagarIndice(conexao);
    else if (!(await temTabela(conexao)) || !(await temGatilhos(conexao))) {
      construindo = true;
      await criarIndice(conexao, opcoes);
    }
    if (mroonga) modo = 'indice';
  } catch (err) {
    log.error({ erro: (err as Error).message }, 'índice de texto indisponível: `texto` lê as mensagens');
    // a half-built index must not be written by triggers; any other failure (the lock not
    // obtained while another process builds, a check failing against a complete index others
    // read) leaves the triggers alone
    if (conexao && construindo) await apagarGatilhos(conexao).catch(() => undefined);
  } finally {
    await conexao?.end();
  }
  return modo;
}

type Conexao = Awaited<ReturnType<typeof novaConexao>>;

/** The delete trigger is created last, after the copy: the three together mean a finished build. */
const GATILHOS = ['insercao', 'alteracao', 'remocao'];
const NOMES_DOS_GATILHOS = GATILHOS.map((g) => `${TABELA}_${g}`);

export interface OpcoesDaConstrucao {
  /** runs between the copy and the last trigger (tests: a write made while the index is built) */
  aposCopia?: () => Promise<void>;
  /** how long to wait for another process's build, in seconds (600) */
  esperaDaTravaS?: number;
}

/** Does this server have the Mroonga engine? */
async function temMroonga(conexao: Conexao): Promise<boolean> {
  const [linhas] = await conexao.query(`SELECT COUNT(*) AS n FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga' AND SUPPORT IN ('YES', 'DEFAULT')`);
  return Number((linhas as { n: number }[])[0].n) > 0;
}

async function temTabela(conexao: Conexao): Promise<boolean> {
  const [linhas] = await conexao.query('SHOW TABLES LIKE ?', [TABELA]);
  return (linhas as unknown[]).length > 0;
}

async function temGatilhos(conexao: Conexao): Promise<boolean> {
  const [linhas] = await conexao.query(
    'SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN (?)',
    [NOMES_DOS_GATILHOS],
  );
  return Number((linhas as { n: number }[])[0].n) === GATILHOS.length;
}

async function apagarGatilhos(conexao: Conexao): Promise<void> {
  for (const gatilho of NOMES_DOS_GATILHOS) await conexao.query(`DROP TRIGGER IF EXISTS ${gatilho}`);
}

/** The triggers first: with them gone, no message write touches the table. */
async function apagarIndice(conexao: Conexao): Promise<void> {
  await apagarGatilhos(conexao);
  await conexao.query(`DROP TABLE IF EXISTS ${TABELA}`);
}

/**
 * The new and edited messages are followed from before the copy, so a write made while it runs is
 * never missed: the copy skips a message its trigger already copied (INSERT IGNORE), and reads
 * without locking the messages (READ COMMITTED), so webhooks keep writing during a long copy.
 * The delete trigger comes last; the copies of conversations deleted meanwhile are then removed.
 */
async function criarIndice(conexao: Conexao, opcoes: OpcoesDaConstrucao): Promise<void> {
  const inicio = Date.now();
  await apagarIndice(conexao);
  await conexao.query(`CREATE TABLE ${TABELA} (
      conversa_id CHAR(36) CHARACTER SET ascii NOT NULL,
      suporte_mensagem_id BIGINT NOT NULL,
      conteudo MEDIUMTEXT NOT NULL,
      PRIMARY KEY (conversa_id, suporte_mensagem_id),
      FULLTEXT KEY ${TABELA}_conteudo (conteudo) COMMENT 'tokenizer "TokenBigramSplitSymbolAlphaDigit"'
    ) ENGINE=Mroonga DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  const copiar = `REPLACE INTO ${TABELA} (conversa_id, suporte_mensagem_id, conteudo)
      VALUES (NEW.conversa_id, NEW.suporte_mensagem_id, NEW.conteudo)`;
  await conexao.query(`CREATE TRIGGER ${TABELA}_insercao AFTER INSERT ON conversa_mensagem FOR EACH ROW ${copiar}`);
  // a repeated webhook "updates" a message to itself: only a changed text is copied again
  await conexao.query(`CREATE TRIGGER ${TABELA}_alteracao AFTER UPDATE ON conversa_mensagem FOR EACH ROW
      BEGIN IF NOT (NEW.conteudo <=> OLD.conteudo COLLATE utf8mb4_bin) THEN ${copiar}; END IF; END`);
  // deletions stamp their conversation with the application's clock: a margin for its skew
  const [[{ desde }]] = (await conexao.query('SELECT UTC_TIMESTAMP(3) - INTERVAL 10 MINUTE AS desde')) as any;
  await conexao.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
  const [r] = await conexao.query(
    `INSERT IGNORE INTO ${TABELA} (conversa_id, suporte_mensagem_id, conteudo) SELECT conversa_id, suporte_mensagem_id, conteudo FROM conversa_mensagem`,
  );
  await opcoes.aposCopia?.();
  // waits for the writes under way on the messages; every deletion after it fires the trigger
  await conexao.query(`CREATE TRIGGER ${TABELA}_remocao AFTER DELETE ON conversa_mensagem FOR EACH ROW
      DELETE FROM ${TABELA} WHERE conversa_id = OLD.conversa_id AND suporte_mensagem_id = OLD.suporte_mensagem_id`);
  await conexao.query(`DELETE FROM ${TABELA} WHERE conversa_id IN (SELECT id FROM conversa WHERE deletado_em >= ?)`, [desde]);
  log.info({ mensagens: (r as { affectedRows: number }).affectedRows, ms: Date.now() - inicio }, 'índice de texto das mensagens criado');
}

/**
 * After a rolled-back write to these conversations' messages, their copies are written again from
 * what the database holds. Mroonga keeps no transactions: the triggers' work stays when the
 * transaction that fired them rolls back, so a rolled-back delete would leave stored messages
 * without their copies, and a rolled-back edit the new text in place of the old. The messages are
 * read with shared locks: a write to them still under way finishes first (its trigger's copy is
 * not overwritten by the text it replaces), and the next waits for the repair. A failure is
 * logged: the gap stays until that message is written again.
 */
export async function recopiarConversas(conversaIds: string[]): Promise<void> {
  if (modo !== 'indice' || !conversaIds.length) return;
  try {
    await emTransacao(
      banco('sales'),
      (conexao) =>
        conexao.query(
          `REPLACE INTO ${TABELA} (conversa_id, suporte_mensagem_id, conteudo)
            SELECT conversa_id, suporte_mensagem_id, conteudo FROM conversa_mensagem WHERE conversa_id IN (?) LOCK IN SHARE MODE`,
          [conversaIds],
        ),
      { leituraConfirmada: true },
    );
  } catch (err) {
    log.error({ erro: (err as Error).message, conversas: conversaIds.length }, 'cópias do índice de texto não refeitas após rollback');
  }
}

/** The text as one Mroonga phrase: inside quotes only `"` and `\` are special. */
const frase = (texto: string) => `"${texto.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/**
 * The index pays per message it finds, and more for a text made of common pairs of characters;
 * reading most recent first pays per message read before 500 conversations match, which is few
 * when the text is common. So a text of one or two characters (common by nature) is read, and so
 * is one the index finds in more than this many messages (docs/decisoes.md, Sales).
 */
export const MAXIMO_PELO_INDICE = 20_000;
const MINIMO_PELO_INDICE = 3;

/**
 * The condition on `c` (a conversa row) for conversations with a message containing `texto`, its
 * parameters pushed in order. With the index, its search runs first, alone, and the messages it
 * found are then checked by their primary key.
 */
export async function condicaoDoTexto(texto: string, parametros: unknown[]): Promise<string> {
  const achadas = modo === 'indice' && [...texto].length >= MINIMO_PELO_INDICE ? await pesquisarNoIndice(texto) : undefined;
  if (achadas) {
    if (!achadas.length) return 'FALSE';
    if (achadas.length <= MAXIMO_PELO_INDICE) {
      parametros.push(
        achadas.map((a) => [a.conversa_id, a.suporte_mensagem_id]),
        contem(texto),
      );
      return 'c.id IN (SELECT mm.conversa_id FROM conversa_mensagem mm WHERE (mm.conversa_id, mm.suporte_mensagem_id) IN (?) AND mm.conteudo LIKE ?)';
    }
  }
  parametros.push(contem(texto));
  return 'EXISTS (SELECT 1 FROM conversa_mensagem mm WHERE mm.conversa_id = c.id AND mm.conteudo LIKE ?)';
}

/**
 * The index's search, or nothing when it fails or the index is not whole (the messages are read
 * instead). Whole means its three triggers are there, as a finished build leaves them: another
 * process rebuilding it (at its start, when a trigger or the table was missing) drops them first
 * and creates the last once every message is copied, and meanwhile the table holds only part of
 * them, so a search there would miss conversations. Asked before and after every search: a
 * rebuild this process did not start is seen at once, even one begun during the search (a build
 * takes longer than a search, so it cannot also end in between).
 */
async function pesquisarNoIndice(texto: string): Promise<{ conversa_id: string; suporte_mensagem_id: string }[] | undefined> {
  try {
    if (!(await indiceInteiro())) return undefined;
    const achadas = await lerDemorado<{ conversa_id: string; suporte_mensagem_id: string }>(
      banco('sales'),
      // the id as text: a chat-platform id past 2^53 would lose digits as a number
      `SELECT conversa_id, CAST(suporte_mensagem_id AS CHAR) AS suporte_mensagem_id FROM ${TABELA}
        WHERE MATCH(conteudo) AGAINST(? IN BOOLEAN MODE) LIMIT ?`,
      [frase(texto), MAXIMO_PELO_INDICE + 1],
    );
    return (await indiceInteiro()) ? achadas : undefined;
  } catch (err) {
    log.error({ erro: (err as Error).message }, 'busca no índice de texto falhou: lendo as mensagens');
    return undefined;
  }
}

/** Whether the index's three triggers are there (pesquisarNoIndice). */
async function indiceInteiro(): Promise<boolean> {
  const [{ gatilhos }] = await lerDemorado<{ gatilhos: number | string }>(
    banco('sales'),
    `SELECT COUNT(*) AS gatilhos FROM information_schema.TRIGGERS
      WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 'conversa_mensagem' AND TRIGGER_NAME IN (?)`,
    [NOMES_DOS_GATILHOS],
  );
  return Number(gatilhos) === GATILHOS.length;
}
