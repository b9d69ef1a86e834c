import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as esperar } from 'node:timers/promises';
import { Connection } from 'mysql2/promise';
import { v7 as uuidv7 } from 'uuid';
import { config } from '../../config';
import { agrupar } from '../../lib/agrupar';
import { limiteDeConcorrencia } from '../../lib/concorrencia';
import { banco, dataSql, ehMariaDb, esperaPorTravaEsgotada, nomeDoBanco, novaConexao, pulsar, travaDaMigracao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { conflito, dadosInvalidos } from '../shared/errors';
import { contarFiltrosComuns } from './contagem';
import { esquecerGeracao, TABELA_DA_GERACAO } from './geracao';
import { CnaesSecundarios, entradasDoZip, LAYOUTS, LayoutDeArquivo, layoutDoArquivo, lerEntrada, LimpezaDeCampos, sqlDeCarga, sqlDosCnaesSecundarios } from './receita';

/**
 * Import of the Receita's open CNPJ files (DESIGN §6), a month at a time:
 *
 * 1. every table the files feed is loaded into a fresh copy (`<table>_nova`), by the database's own
 *    bulk loader, streaming each zip entry through a cleaning of its fields (memory stays flat
 *    whatever the file size); the establishments' secondary CNAEs load beside them into their own
 *    table, so the filter can use an index;
 * 2. each copy gets its indexes once its files are in;
 * 3. one `RENAME TABLE` swaps all copies in at once, with a new generation of what is cached about
 *    the data (geracao.ts): lookups read last month's data until that instant and this month's
 *    right after, with no window where they fail and no duplicates from running the import again.
 *
 * A kind of file absent from the directory keeps its current table.
 */

export interface Progresso {
  /** loading while any file is, then indexing the last tables, then the swap: never back */
  fase: 'carregando' | 'indexando' | 'trocando' | 'concluida';
  percentual: number;
  /** the file read last, while files are read */
  arquivo?: string;
  /** tables whose indexes are being built (an establishments' build takes minutes on a real month) */
  indexando?: string[];
  linhas: Record<string, number>;
  /** since the import began: told again at least every PULSO.ms, so a long wait or index build shows alive */
  segundos: number;
}

/** How often the progress is told again while nothing else changes it (tests lower it). */
export const PULSO = { ms: 5000 };

/**
 * An import's progress, told to `aoProgredir`: reading the files is 80%, indexing the tables 15%,
 * the swap the rest. The kinds load side by side and each is indexed once its files are in, so the
 * phase is loading while any kind still loads. Told at most once a second as bytes are read, at
 * once when a phase or a table changes, and again every PULSO.ms until `parar`: a wait for a
 * previous run's leftovers, an index build or the swap's retries show alive.
 */
class Andamento {
  private feitos = 0;
  private tiposIndexados = 0;
  private ultimoAviso = 0;
  private ultimoArquivo: string | undefined;
  private readonly porCarregar: Set<string>;
  /** kinds of file the import loads, each indexed once its files are in */
  private readonly tipos: number;
  private readonly emIndexacao = new Set<string>();
  private fase: 'carregando' | 'trocando' = 'carregando';
  private readonly pulso = setInterval(() => this.avisar(true), PULSO.ms);

  constructor(
    /** when the import began (Date.now()), as its result counts it */
    private readonly inicio: number,
    private readonly bytes: number,
    tipos: Iterable<string>,
    private readonly linhas: Record<string, number>,
    private readonly aoProgredir: (p: Progresso) => void,
  ) {
    this.porCarregar = new Set(tipos);
    this.tipos = this.porCarregar.size;
  }

  /** `bytes` more of the files read, the last of them from `arquivo` */
  lido(bytes: number, arquivo: string): void {
    this.feitos += bytes;
    this.ultimoArquivo = arquivo;
    this.avisar();
  }

  carregada(tipo: string): void {
    this.porCarregar.delete(tipo);
  }

  indexando(tabela: string): void {
    this.emIndexacao.add(tabela);
    this.avisar(true);
  }

  indexada(tabela: string): void {
    this.emIndexacao.delete(tabela);
  }

  tipoIndexado(): void {
    this.tiposIndexados++;
  }

  trocando(): void {
    this.fase = 'trocando';
    this.avisar(true);
  }

  concluida(): void {
    this.aoProgredir({ fase: 'concluida', percentual: 100, linhas: { ...this.linhas }, segundos: this.segundos() });
  }

  parar(): void {
    clearInterval(this.pulso);
  }

  private segundos(): number {
    return Math.round((Date.now() - this.inicio) / 1000);
  }

  private avisar(forcar = false): void {
    if (!forcar && Date.now() - this.ultimoAviso < 1000) return;
    this.ultimoAviso = Date.now();
    const carregando = this.porCarregar.size > 0;
    this.aoProgredir({
      fase: this.fase === 'trocando' ? 'trocando' : carregando ? 'carregando' : 'indexando',
      percentual: Math.min(95, Math.floor((this.feitos / (this.bytes || 1)) * 80 + (this.tiposIndexados / this.tipos) * 15)),
      ...(carregando && { arquivo: this.ultimoArquivo }),
      ...(this.emIndexacao.size && { indexando: [...this.emIndexacao] }),
      linhas: { ...this.linhas },
      segundos: this.segundos(),
    });
  }
}

export interface ResultadoDaImportacao {
  id: string;
  linhas: Record<string, number>;
  segundos: number;
}

interface ArquivoDaImportacao {
  caminho: string;
  layout: LayoutDeArquivo;
  bytes: number;
}

const log = logger('leads-importacao');

/** Bulk loads running at once: enough to keep the database's cores busy, few enough not to thrash. */
const CARGAS_SIMULTANEAS = 4;

/**
 * Rows a LOAD DATA may number (`@numero_base` + its line, layouts' `calculadas`) per file: each file
 * of a kind gets its own range, so parts loading side by side never take the same id. The partners'
 * ids were AUTO_INCREMENT: with InnoDB's default `innodb_autoinc_lock_mode` (1) a LOAD DATA holds
 * the table's AUTO-INC lock to its end, and a part loading beside another waited for the whole
 * file, then failed after `innodb_lock_wait_timeout` (50 s), as a real part (2.6 million rows) did.
 */
const LINHAS_POR_ARQUIVO = 1e11;

async function arquivosDoDiretorio(diretorio: string): Promise<ArquivoDaImportacao[]> {
  const nomes = await readdir(diretorio).catch(() => {
    throw dadosInvalidos(`Diretório ilegível: ${diretorio}`);
  });
  const arquivos: ArquivoDaImportacao[] = [];
  for (const nome of emOrdemDasPartes(nomes)) {
    const layout = layoutDoArquivo(nome);
    if (!layout) continue;
    const caminho = path.join(diretorio, nome);
    arquivos.push({ caminho, layout, bytes: (await stat(caminho)).size });
  }
  if (!arquivos.some((a) => a.layout.tabela === 'estabelecimento')) {
    throw dadosInvalidos(`Nenhum arquivo Estabelecimentos*.zip em ${diretorio}.`);
  }
  const faltando = partesQueFaltam(arquivos.map((a) => path.basename(a.caminho)));
  if (faltando.length) {
    throw dadosInvalidos(`Faltam partes do mês em ${diretorio}: ${faltando.join(', ')}. Nada foi importado: cada tipo de arquivo substitui a tabela inteira.`);
  }
  return arquivos;
}

/**
 * The files in the order they load, each kind's parts by their number (`Estabelecimentos2` before
 * `Estabelecimentos10`): of a key repeated across parts the first loaded is kept.
 */
export function emOrdemDasPartes(nomes: string[]): string[] {
  const ordem = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
  return [...nomes].sort((a, b) => ordem.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A kind the Receita splits in numbered parts (Empresas0.zip, Empresas1.zip...) replaces its whole
 * table, so a part missing from the directory (a failed download) would drop its rows until the
 * next month: the numbers of each kind must run from 0 without a gap. (A missing last part cannot
 * be told from a month with fewer parts.)
 */
export function partesQueFaltam(nomes: string[]): string[] {
  const partes = new Map<string, { nome: string; numeros: Set<number> }>();
  for (const nome of nomes) {
    const m = /^([A-Za-z]+)(\d+)\.zip$/i.exec(nome);
    if (!m) continue;
    const tipo = partes.get(m[1].toLowerCase()) ?? { nome: m[1], numeros: new Set<number>() };
    tipo.numeros.add(Number(m[2]));
    partes.set(m[1].toLowerCase(), tipo);
  }
  const faltando: string[] = [];
  for (const { nome, numeros } of partes.values()) {
    const ultima = Math.max(...numeros);
    const quantas = ultima - [...numeros].filter((k) => k < ultima).length;
    // a stray name (Empresas20260101.zip) would miss millions: a few are named, then how many more
    const nomeadas: string[] = [];
    for (let n = 0; n < ultima && nomeadas.length < 10; n++) if (!numeros.has(n)) nomeadas.push(`${nome}${n}.zip`);
    faltando.push(...nomeadas);
    if (quantas > nomeadas.length) faltando.push(`mais ${quantas - nomeadas.length} de ${nome}`);
  }
  return faltando;
}

const CNAES_SECUNDARIOS = 'estabelecimento_cnae_secundaria';

/** Tables whose rows the importer numbers itself (`calculadas.id`): two parts never hold the same key. */
const numeradasPeloImportador = (tabela: string) => LAYOUTS.some((l) => l.tabela === tabela && l.calculadas?.id);

/** The tables a kind of file feeds: the establishments feed their secondary CNAEs' too. */
const tabelasDoTipo = (tabela: string) => (tabela === 'estabelecimento' ? [tabela, CNAES_SECUNDARIOS] : [tabela]);

/** Tables the files replace. */
const tabelasTrocadas = (arquivos: ArquivoDaImportacao[]): string[] => [...new Set(arquivos.flatMap((a) => tabelasDoTipo(a.layout.tabela)))];

interface Conexoes {
  dados: Connection;
  /** establishments only: their secondary CNAEs load beside them, on a connection of their own */
  cnaes?: Connection;
}

/**
 * Loads one zip: each entry inside, whatever its name, in one LOAD DATA (and one of its secondary
 * CNAEs). Answers the rows added per table.
 */
async function carregarZip(conexoes: Conexoes, arquivo: ArquivoDaImportacao, aoLer: (bytes: number) => void): Promise<Record<string, number>> {
  const { zip, entradas } = await entradasDoZip(arquivo.caminho);
  const { tabela } = arquivo.layout;
  const carga: Record<string, number> = { [tabela]: 0 };
  let linhasLidas = 0;
  let linhasForaDoLayout = 0;
  try {
    for (const entrada of entradas) {
      const cnaes = conexoes.cnaes ? new CnaesSecundarios() : undefined;
      const limpeza = new LimpezaDeCampos(arquivo.layout, aoLer, cnaes);
      // its failures reach the loads that read it and the pipeline's promise; destroyed with an
      // error once the pipeline has let go (a load cut after a failure elsewhere), the event alone
      // would be thrown as an unhandled error
      limpeza.on('error', () => undefined);
      const origem = await lerEntrada(zip, entrada);
      const fluxo = pipeline(origem, limpeza).catch((err) => limpeza.destroy(err));
      const onde = { arquivo: path.basename(arquivo.caminho), entrada: entrada.fileName };
      try {
        // both loads read what one cleaning writes: either failing stops the other
        const parar = (err: unknown) => {
          limpeza.destroy(err as Error);
          throw err;
        };
        const [dados, secundarios] = await Promise.allSettled([
          carregar(conexoes.dados, sqlDeCarga(arquivo.layout, `${tabela}_nova`), limpeza, onde).catch(parar),
          cnaes ? carregar(conexoes.cnaes!, sqlDosCnaesSecundarios(`${CNAES_SECUNDARIOS}_nova`), cnaes, onde).catch(parar) : undefined,
        ]);
        if (dados.status === 'rejected') throw dados.reason;
        if (secundarios.status === 'rejected') throw secundarios.reason;
        carga[tabela] += dados.value;
        linhasLidas += limpeza.linhasLidas;
        linhasForaDoLayout += limpeza.linhasForaDoLayout;
        if (secundarios.value !== undefined) carga[CNAES_SECUNDARIOS] = (carga[CNAES_SECUNDARIOS] ?? 0) + secundarios.value;
      } finally {
        // a load that failed before reading the file leaves the stream paused: release it
        origem.destroy();
        limpeza.destroy();
        cnaes?.destroy();
        await fluxo;
      }
    }
  } finally {
    zip.close();
  }
  // a file with no line (a download cut to nothing) would leave its part out of the month, or
  // replace its kind's live table with an empty one: no real file is empty. Lines read, not rows
  // loaded: a part whose every key an earlier part already holds loads none, and is no empty file
  const nome = path.basename(arquivo.caminho);
  if (!linhasLidas) throw new Error(`${nome} holds no line: nothing was changed`);
  // a file of another layout (another kind under this name, another separator) would load its
  // lines as garbage, or drop them all, and replace the live table: refused. A few lines out of
  // place are a real month's (a `";"` inside a name shifts its row)
  if (linhasForaDoLayout * 2 > linhasLidas) {
    throw new Error(
      `${nome}: ${linhasForaDoLayout} of ${linhasLidas} lines are not in the layout of ${tabela} (${arquivo.layout.colunas.length} fields separated by ";"): nothing was changed`,
    );
  }
  if (linhasForaDoLayout) log.warn({ arquivo: nome, linhas: linhasLidas, foraDoLayout: linhasForaDoLayout }, 'linhas fora do layout');
  return carga;
}

/** One LOAD DATA of `fluxo`: the rows it added. */
async function carregar(conexao: Connection, sql: string, fluxo: Readable, onde: Record<string, string>): Promise<number> {
  const [r] = await conexao.query({ sql, infileStreamFactory: () => (fluxo.destroyed ? encerrado(fluxo) : fluxo) });
  const { affectedRows, warningStatus } = r as { affectedRows: number; warningStatus: number };
  // malformed values the loader kept as best it could (IGNORE): worth a look, not a stop
  if (warningStatus) log.warn({ ...onde, avisos: warningStatus }, 'valores ajustados na carga');
  return affectedRows;
}

/** Runs `fn` with its own connection, tuned for bulk loading. */
async function comConexao<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
  const conexao = await novaConexao('leads');
  try {
    await conexao.query('SET SESSION foreign_key_checks = 0');
    return await fn(conexao);
  } finally {
    await conexao.end().catch(() => undefined);
  }
}

/**
 * The connections of one run's loads and index builds. After a failure they are cut (KILL
 * CONNECTION, issued on the run's control connection) instead of waited for: on a real month a file
 * still loading or a table still indexing would keep the run, and its lock, for minutes over work
 * that is dropped anyway. A connection asked for after that fails at once.
 */
class ConexoesDaCarga {
  private readonly abertas = new Set<Connection>();
  private cortadas = false;

  constructor(private readonly controle: Connection) {}

  com<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    return comConexao(async (conexao) => {
      if (this.cortadas) throw new Error('carga interrompida por uma falha da importação');
      this.abertas.add(conexao);
      try {
        return await fn(conexao);
      } finally {
        this.abertas.delete(conexao);
      }
    });
  }

  async cortar(): Promise<void> {
    this.cortadas = true;
    const ids = [...this.abertas].map((c) => c.threadId);
    await Promise.all(ids.map((id) => this.controle.query(`KILL CONNECTION ${Number(id)}`).catch(() => undefined)));
  }
}

/**
 * `sinal`: aborted when the process shuts down (the queue's worker asks its jobs to stop): the
 * loads and index builds under way are cut and the import fails, leaving the live data as it was.
 */
export async function importarCnpj(
  diretorio: string,
  aoProgredir: (p: Progresso) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<ResultadoDaImportacao> {
  const inicio = Date.now();
  const arquivos = await arquivosDoDiretorio(path.resolve(diretorio));
  // the generation's one row goes in with the data, in the same swap
  const tabelas = [...tabelasTrocadas(arquivos), TABELA_DA_GERACAO];
  const id = uuidv7();
  const sequelize = banco('leads');
  const linhas: Record<string, number> = {};

  // One import at a time per database: a named lock held by this connection for the whole run.
  return comConexao(async (controle) => {
    const trava = `${nomeDoBanco('leads')}_importacao`.slice(0, 64);
    const [[{ obtida }]] = (await controle.query('SELECT GET_LOCK(?, 0) AS obtida', [trava])) as unknown as [[{ obtida: number }]];
    if (obtida !== 1) throw conflito('Outra importação do cadastro CNPJ está em andamento.');
    // The lock lives as long as this connection, idle while the load runs on others: kept by a
    // statement now and then, and let go by the server once silent for twice the job's lock (a
    // worker host gone without closing its sockets: power lost, cut off), as the queue lets go the
    // job. With a day's wait, as before, such a death refused the next imports for up to a day.
    const lockMs = config().leads.importacaoLockMs;
    await controle.query('SET SESSION wait_timeout = ?', [Math.ceil((2 * lockMs) / 1000)]);
    // holding the lock, no other import runs: one left "em andamento" was cut short, unless its
    // month is live (the generation is its id: it died after its swap, before its record)
    await controle.query(
      `UPDATE importacao SET situacao = IF(id = (SELECT geracao FROM ${TABELA_DA_GERACAO} WHERE id = 1), 'concluida', 'interrompida')
        WHERE situacao = 'em_andamento'`,
    );
    await sequelize.query('INSERT INTO importacao (id, diretorio, situacao, iniciada_em) VALUES (?, ?, ?, ?)', {
      replacements: [id, diretorio, 'em_andamento', dataSql(new Date())],
    });
    const porTabela = agrupar(arquivos, (a) => a.layout.tabela);
    const andamento = new Andamento(inicio, bytesDe(arquivos), porTabela.keys(), linhas, aoProgredir);
    let pararPulso = () => undefined as void;
    try {
      // Leftovers of a run cut short before or after its swap, of every kind (the next months may
      // bring no file of that kind): only an import makes them, and this one holds the lock.
      const todas = [...new Set(LAYOUTS.flatMap((l) => tabelasDoTipo(l.tabela))), TABELA_DA_GERACAO];
      await apagarSobras(controle, todas.flatMap((t) => [`${t}_nova`, `${t}_antiga`]));
      // Copies without secondary indexes: each index is built after the load in one sorted pass,
      // many times faster than updating it row by row.
      const indices = new Map<string, string[]>();
      const esquemaNoInicio = await esquemaAtual(controle, tabelas);
      for (const t of tabelas) {
        await controle.query(`CREATE TABLE ${t}_nova LIKE ${t}`);
        // ids the load numbers (LINHAS_POR_ARQUIVO): no AUTO_INCREMENT left, whose table lock a LOAD DATA may hold to its end
        if (numeradasPeloImportador(t)) await controle.query(`ALTER TABLE ${t}_nova MODIFY id BIGINT NOT NULL`);
        indices.set(t, indicesSecundarios(esquemaNoInicio.get(t)!));
        const nomes = indices.get(t)!.map((d) => /KEY `([^`]+)`/.exec(d)![1]);
        if (nomes.length) await controle.query(`ALTER TABLE ${t}_nova ${nomes.map((n) => `DROP INDEX \`${n}\``).join(', ')}`);
      }
      // this run's id names the generation its month starts
      await controle.query(`INSERT INTO ${TABELA_DA_GERACAO}_nova (id, geracao) VALUES (1, ?)`, [id]);

      // Every file on a connection of its own, a few at a time (a month has dozens of parts);
      // each table is indexed as soon as its last file is in.
      // After a failure the loads not yet started are skipped, those in flight are cut, and the
      // clean-up below waits for them to end, so none of them can write into the copies of a later
      // import.
      let falha: unknown;
      const conexoes = new ConexoesDaCarga(controle);
      const falhar = async (err: unknown) => {
        if (falha) return;
        falha = err;
        await conexoes.cortar();
      };
      // the lock's connection lost (the server let it go after a stall past its wait): another import
      // may start, so this one stops loading at once
      pararPulso = pulsar(
        () => controle.query('DO 0'),
        lockMs / 4,
        (err) => void falhar(new Error(`Importação interrompida: a conexão da trava caiu (${err.message}).`)),
      );
      const vez = limiteDeConcorrencia(CARGAS_SIMULTANEAS);
      const tarefa = <T>(fn: () => Promise<T>, urgente = false) =>
        vez(async () => {
          if (falha) throw falha;
          return fn().catch(async (err) => {
            await falhar(err);
            throw err;
          });
        }, urgente);
      const aoAbortar = () => void falhar(new Error('Importação interrompida: o processo está encerrando.'));
      if (sinal?.aborted) aoAbortar();
      sinal?.addEventListener('abort', aoAbortar, { once: true });
      const todasAcabaram = async (tarefas: Promise<unknown>[]) => {
        await Promise.allSettled(tarefas);
        if (falha) throw falha;
      };
      // The largest kind first (the establishments): its indexes take longest, and build while
      // the smaller kinds load.
      const porTamanho = [...porTabela.entries()].sort(([, a], [, b]) => bytesDe(b) - bytesDe(a));
      await todasAcabaram(
        porTamanho.map(async ([tabela, lista]) => {
          // Rows keyed by the data (a CNPJ, a code) that two parts both hold (the Receita's files
          // repeat some) would make two loads side by side wait on each other's uncommitted row
          // until one failed (the lock wait past innodb_lock_wait_timeout, or a deadlock), on every
          // run of that month: such parts load one after the other, in file order, the first line
          // kept. Rows the importer numbers (the partners) never collide, and load side by side.
          const naVez = limiteDeConcorrencia(numeradasPeloImportador(tabela) ? Infinity : 1);
          const carregarArquivo = (arquivo: ArquivoDaImportacao, indice: number) =>
            naVez(() =>
              tarefa(() =>
                conexoes.com(async (conexao) => {
                  await conexao.query('SET @numero_base = ?, @numero_da_linha = 0', [indice * LINHAS_POR_ARQUIVO]);
                  // Progress counts the zip's share of the total as its entries are read.
                  const fracao = arquivo.bytes / (await tamanhoDescomprimido(arquivo.caminho));
                  const aoLer = (bytes: number) => andamento.lido(bytes * fracao, path.basename(arquivo.caminho));
                  const carga =
                    tabelasDoTipo(tabela).includes(CNAES_SECUNDARIOS)
                      ? await conexoes.com((cnaes) => carregarZip({ dados: conexao, cnaes }, arquivo, aoLer))
                      : await carregarZip({ dados: conexao }, arquivo, aoLer);
                  for (const [t, n] of Object.entries(carga)) linhas[t] = (linhas[t] ?? 0) + n;
                  log.info({ arquivo: path.basename(arquivo.caminho), tabela, linhas: carga[tabela] }, 'arquivo carregado');
                }),
              ),
            );
          await todasAcabaram(lista.map(carregarArquivo));
          andamento.carregada(tabela);
          // a table's indexes come before the loads still waiting: the last of them ends the import
          const indexar = (t: string) =>
            tarefa(
              () =>
                conexoes.com(async (conexao) => {
                  andamento.indexando(t);
                  try {
                    await criarIndices(conexao, t, indices.get(t)!);
                    linhas[t] -= await apagarLinhasSemChave(conexao, t);
                  } finally {
                    andamento.indexada(t);
                  }
                }),
              true,
            );
          await todasAcabaram(tabelasDoTipo(tabela).map(indexar));
          andamento.tipoIndexado();
        }),
      );

      // A newer version's migration of these tables (an index, a column, a row of the generation's)
      // made while the month loaded would be undone by the swap, whose copies predate it, and stay
      // recorded as done: the swap waits for a migration under way, holding off others, and stops
      // when any ran
      await esperarAsMigracoes(controle, () => falha);
      // from the swap on, a shutdown no longer kills the loads' connections: the swap stops between
      // its attempts instead (trocarTabelas)
      sinal?.removeEventListener('abort', aoAbortar);
      if (falha) throw falha;
      await conferirEsquema(controle, esquemaNoInicio);
      // the swap may wait for reads holding the live tables, minutes at worst: still told
      andamento.trocando();
      await trocarTabelas(controle, tabelas, sinal);
      // the month is live: a release that fails fails nothing (the lock goes with the connection)
      await controle.query('SELECT RELEASE_LOCK(?)', [travaDaMigracao('leads')]).catch(() => undefined);
    } catch (err) {
      andamento.parar();
      pararPulso();
      // briefly: a table still held (the leftovers that failed this run) is the next run's to drop
      await controle.query('SET SESSION lock_wait_timeout = 2').catch(() => undefined);
      for (const t of tabelas) await controle.query(`DROP TABLE IF EXISTS ${t}_nova`).catch(() => undefined);
      await sequelize
        .query('UPDATE importacao SET situacao = ?, erro = ?, concluida_em = ? WHERE id = ?', {
          replacements: ['falhou', String((err as Error).message).slice(0, 1000), dataSql(new Date()), id],
        })
        // the run's own failure goes on below; its record stays `em_andamento` until the next run
        // marks it `interrompida`, so this one is said here
        .catch((erroDoRegistro: Error) => log.warn({ err: erroDoRegistro, importacao: id }, 'falha da importação não registrada'));
      for (const t of [trava, travaDaMigracao('leads')]) await controle.query('SELECT RELEASE_LOCK(?)', [t]).catch(() => undefined);
      throw err;
    }

    try {
      // The new month is live, under its new generation: what follows is tidying up, each step on its
      // own, and its failure fails nothing. This process forgets the generation it read first (what it
      // keeps about last month, its codes among them, is kept under it); other processes see the new
      // month within VALIDADE_DA_GERACAO_MS.
      const arrumar = (passo: string, fn: () => Promise<unknown>) =>
        fn().catch((err) => log.warn({ passo, erro: (err as Error).message }, 'importação concluída; um passo da arrumação falhou'));
      esquecerGeracao();
      await arrumar('registro', () =>
        sequelize.query('UPDATE importacao SET situacao = ?, linhas = ?, concluida_em = ? WHERE id = ?', {
          replacements: ['concluida', JSON.stringify(linhas), dataSql(new Date()), id],
        }),
      );
      await arrumar('tabelas antigas', () => controle.query(`DROP TABLE ${tabelas.map((t) => `${t}_antiga`).join(', ')}`));
      await controle.query('SELECT RELEASE_LOCK(?)', [trava]).catch(() => undefined);
      // the broad listings' counts, of the month now live: their first pages wait for none (a
      // shutdown under way skips them: they are counted when listed)
      if (!sinal?.aborted) await arrumar('contagens comuns', async () => {
        const inicioDaContagem = Date.now();
        const conjuntos = await contarFiltrosComuns();
        log.info({ conjuntos, ms: Date.now() - inicioDaContagem }, 'contagens dos filtros comuns guardadas');
      });
      andamento.concluida();
      const duracao = (Date.now() - inicio) / 1000;
      log.info({ id, linhas, segundos: duracao }, 'importação concluída');
      return { id, linhas, segundos: duracao };
    } finally {
      // told until the tidy-up ends (the old tables' drop may wait), and never after
      andamento.parar();
      pararPulso();
    }
  });
}

/**
 * What the swap must find as the import found it: each live table's definition (but for its next
 * AUTO_INCREMENT value, which the registry's own rows move) and the migrations recorded.
 */
async function esquemaAtual(conexao: Connection, tabelas: string[]): Promise<Map<string, string>> {
  const esquema = new Map<string, string>();
  for (const t of tabelas) {
    const [[linha]] = (await conexao.query(`SHOW CREATE TABLE ${t}`)) as unknown as [[Record<string, string>]];
    esquema.set(t, linha['Create Table'].replace(/ AUTO_INCREMENT=\d+/, ''));
  }
  const [migracoes] = await conexao.query('SELECT name FROM schema_migracoes ORDER BY name');
  esquema.set('schema_migracoes', (migracoes as { name: string }[]).map((m) => m.name).join(','));
  return esquema;
}

/** Takes the leads migrations' lock, a second at a time, so a failure (a shutdown) ends the wait. */
async function esperarAsMigracoes(conexao: Connection, falha: () => unknown): Promise<void> {
  for (let vez = 0; ; vez++) {
    const [[{ obtida }]] = (await conexao.query('SELECT GET_LOCK(?, 1) AS obtida', [travaDaMigracao('leads')])) as unknown as [
      [{ obtida: number | null }],
    ];
    if (obtida === 1) return;
    // NULL is the server's error (the statement killed), not a wait that ended
    if (obtida == null) throw new Error('the leads migration lock: the server answered no result');
    if (falha()) throw falha();
    if (vez === 0) log.info('troca das tabelas esperando uma migração do leads');
  }
}

async function conferirEsquema(conexao: Connection, noInicio: Map<string, string>): Promise<void> {
  const agora = await esquemaAtual(conexao, [...noInicio.keys()].filter((t) => t !== 'schema_migracoes'));
  for (const [t, antes] of noInicio) {
    if (agora.get(t) !== antes) {
      throw new Error(`${t} mudou durante a importação (uma migração de versão mais nova): o mês não entrou; rode import-cnpj de novo.`);
    }
  }
}

/** The secondary index definitions in a table's `SHOW CREATE TABLE` (migrations are the source). */
function indicesSecundarios(definicao: string): string[] {
  return definicao
    .split('\n')
    .map((l) => l.trim().replace(/,$/, ''))
    .filter((l) => /^(UNIQUE |FULLTEXT )?KEY `/.test(l));
}

/** Regular indexes in one pass; InnoDB builds a full-text index alone. */
async function criarIndices(conexao: Connection, tabela: string, definicoes: string[]): Promise<void> {
  const comuns = definicoes.filter((d) => !d.startsWith('FULLTEXT'));
  if (comuns.length) await conexao.query(`ALTER TABLE ${tabela}_nova ${comuns.map((d) => `ADD ${d}`).join(', ')}`);
  for (const d of definicoes.filter((d) => d.startsWith('FULLTEXT'))) await conexao.query(`ALTER TABLE ${tabela}_nova ADD ${d}`);
}

/**
 * How long an import waits to drop a run's leftovers, seconds. A run whose worker was killed may
 * leave its statement running in the database (an index build of minutes, a load rolling back),
 * holding its table: the server's own wait (a day by default) would hold this import silently,
 * with no progress, while a retry gets 409. Tests lower it.
 */
export const ESPERA_PELAS_SOBRAS = { segundos: 30 };

async function apagarSobras(conexao: Connection, sobras: string[]): Promise<void> {
  await conexao.query(`SET SESSION lock_wait_timeout = ${ESPERA_PELAS_SOBRAS.segundos}`);
  try {
    await conexao.query(`DROP TABLE IF EXISTS ${sobras.join(', ')}`);
  } catch (err) {
    if (!esperaPorTravaEsgotada(err)) throw err;
    throw new Error(
      `a previous import's work tables are still in use in the database (a statement of a run cut short, such as an index build, still running): ` +
        `nothing was changed; import again once it ends (SHOW PROCESSLIST shows it)`,
    );
  } finally {
    // a failure of its own must not hide the drop's
    await conexao.query('SET SESSION lock_wait_timeout = DEFAULT').catch(() => undefined);
  }
}

/** The swap's attempts, and after how many failed ones reads holding it up are stopped (tests lower both). */
export const TROCA_DAS_TABELAS = { tentativas: 60, interromperLeiturasApos: 20 };

/**
 * One `RENAME TABLE` swaps every copy in at once. It waits for reads still running on the live
 * tables, and new reads queue behind it: a short wait (2 s) keeps lookups from stalling behind a
 * slow read. Between attempts a pause lets the queued reads through, and the next attempt finds
 * other reads running; the attempts go on for minutes (a page may read for 10 s, a count for 6 s),
 * since giving up throws the whole load away. Past a third of them, a steady stream of long
 * listings would make it fail all the same: the reads of the registry running for 2 s or more are
 * stopped before each attempt (their listings answer 503, to be asked again a moment later).
 * A shutdown (`sinal`) waits for the attempt under way only, not for minutes of them: the worker
 * is closed within seconds, and a process gone mid-swap left the job stalled and the run's record
 * `em_andamento`; the import fails instead, saying so, the live data untouched.
 */
const trocaInterrompida = () => new Error('Importação interrompida: o processo está encerrando, e a troca das tabelas ainda esperava por leituras.');

async function trocarTabelas(conexao: Connection, tabelas: string[], sinal?: AbortSignal): Promise<void> {
  await conexao.query('SET SESSION lock_wait_timeout = 2');
  for (let tentativa = 1; ; tentativa++) {
    if (tentativa > TROCA_DAS_TABELAS.interromperLeiturasApos) await interromperLeiturasLongas(conexao, tabelas);
    try {
      await conexao.query(`RENAME TABLE ${tabelas.map((t) => `${t} TO ${t}_antiga, ${t}_nova TO ${t}`).join(', ')}`);
      return;
    } catch (err) {
      if (!esperaPorTravaEsgotada(err) || tentativa >= TROCA_DAS_TABELAS.tentativas) throw err;
      if (sinal?.aborted) throw trocaInterrompida();
      log.warn({ tentativa }, 'troca das tabelas esperando leituras em curso');
      // a shutdown during the pause ends it at once
      await esperar(500 + Math.random() * 1000, undefined, { signal: sinal }).catch(() => {
        throw trocaInterrompida();
      });
    }
  }
}

/**
 * Stops the reads of the live `tabelas` that have been running for 2 s or more (never this
 * connection's). On MariaDB each by its query id (KILL QUERY ID): the statement read in the list,
 * never one its pooled connection started since. MySQL has no such form: there a connection is
 * stopped by its id, and one whose read ended in between could have its next statement stopped
 * instead (a lookup answered 503, to be asked again).
 */
async function interromperLeiturasLongas(conexao: Connection, tabelas: string[]): Promise<void> {
  const mariaDb = await ehMariaDb(banco('leads'));
  const [linhas] = await conexao.query(
    `SELECT ID AS id${mariaDb ? ', QUERY_ID AS consulta' : ''} FROM information_schema.PROCESSLIST
      WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND = 'Query' AND TIME >= 2
        AND (INFO LIKE 'SELECT%' OR INFO LIKE 'SET STATEMENT%') AND INFO REGEXP ?`,
    [`\\b(${tabelas.join('|')})\\b`],
  );
  const leituras = linhas as { id: number; consulta?: number }[];
  for (const l of leituras) {
    const kill = mariaDb ? `KILL QUERY ID ${Number(l.consulta)}` : `KILL QUERY ${Number(l.id)}`;
    await conexao.query(kill).catch(() => undefined); // ended meanwhile
  }
  if (leituras.length) log.warn({ leituras: leituras.length }, 'troca das tabelas: leituras longas interrompidas para a troca');
}

/**
 * A malformed line (say, only spaces) becomes a row whose key the loader left empty: it would lead
 * every listing. Dropped once the table's indexes are there to find it. (Secondary CNAEs are only
 * written for a complete CNPJ.)
 */
async function apagarLinhasSemChave(conexao: Connection, tabela: string): Promise<number> {
  if (tabela === CNAES_SECUNDARIOS) return 0;
  const chave = { estabelecimento: 'cnpj', empresa: 'cnpj_basico', socio: 'cnpj_basico', simples: 'cnpj_basico' }[tabela] ?? 'codigo';
  const [r] = await conexao.query(`DELETE FROM ${tabela}_nova WHERE ${chave} = ''`);
  return (r as { affectedRows: number }).affectedRows;
}

/**
 * A stream already destroyed (the other load of the pair failed first) never ends nor fails again,
 * and mysql2 would wait on it until the server's read time-out: it gets one that fails at once.
 */
function encerrado(fluxo: Readable): Readable {
  const substituto = new Readable({ read() {} });
  process.nextTick(() => substituto.destroy(fluxo.errored ?? new Error('Carga interrompida.')));
  return substituto;
}

const bytesDe = (arquivos: ArquivoDaImportacao[]) => arquivos.reduce((s, a) => s + a.bytes, 0);

async function tamanhoDescomprimido(caminho: string): Promise<number> {
  const { zip, entradas } = await entradasDoZip(caminho);
  zip.close();
  return entradas.reduce((s, e) => s + e.uncompressedSize, 0) || 1;
}
