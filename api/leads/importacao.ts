import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Connection } from 'mysql2/promise';
import { v7 as uuidv7 } from 'uuid';
import { banco, dataSql, nomeDoBanco, novaConexao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { conflito, dadosInvalidos } from '../shared/errors';
import { esquecerContagens } from './contagem';
import { entradasDoZip, LayoutDeArquivo, layoutDoArquivo, lerEntrada, LimpezaDeBytes, sqlDeCarga } from './receita';

/**
 * Import of the Receita's open CNPJ files (DESIGN §6), a month at a time:
 *
 * 1. every table the files feed is loaded into a fresh copy (`<table>_nova`), by the database's own
 *    bulk loader, streaming each zip entry through (memory stays flat whatever the file size);
 * 2. secondary CNAEs are spread into their own table, so the filter can use an index;
 * 3. one `RENAME TABLE` swaps all copies in at once: lookups read last month's data until that
 *    instant and this month's right after, with no window where they fail and no duplicates from
 *    running the import again.
 *
 * A kind of file absent from the directory keeps its current table.
 */

export interface Progresso {
  fase: 'carregando' | 'indexando' | 'trocando' | 'concluida';
  percentual: number;
  arquivo?: string;
  linhas: Record<string, number>;
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

async function arquivosDoDiretorio(diretorio: string): Promise<ArquivoDaImportacao[]> {
  const nomes = await readdir(diretorio).catch(() => {
    throw dadosInvalidos(`Diretório ilegível: ${diretorio}`);
  });
  const arquivos: ArquivoDaImportacao[] = [];
  for (const nome of nomes.sort()) {
    const layout = layoutDoArquivo(nome);
    if (!layout) continue;
    const caminho = path.join(diretorio, nome);
    arquivos.push({ caminho, layout, bytes: (await stat(caminho)).size });
  }
  if (!arquivos.some((a) => a.layout.tabela === 'estabelecimento')) {
    throw dadosInvalidos(`Nenhum arquivo Estabelecimentos*.zip em ${diretorio}.`);
  }
  return arquivos;
}

/** Tables each kind of file replaces (secondary CNAEs come from the establishments). */
function tabelasTrocadas(arquivos: ArquivoDaImportacao[]): string[] {
  const tabelas = new Set(arquivos.map((a) => a.layout.tabela));
  if (tabelas.has('estabelecimento')) tabelas.add('estabelecimento_cnae_secundaria');
  return [...tabelas];
}

/** Loads one zip: each entry inside, whatever its name, in one LOAD DATA. */
async function carregarZip(conexao: Connection, arquivo: ArquivoDaImportacao, aoLer: (bytes: number) => void): Promise<number> {
  const { zip, entradas } = await entradasDoZip(arquivo.caminho);
  let linhas = 0;
  try {
    for (const entrada of entradas) {
      const limpeza = new LimpezaDeBytes(aoLer);
      const origem = await lerEntrada(zip, entrada);
      const fluxo = pipeline(origem, limpeza).catch((err) => limpeza.destroy(err));
      const [r] = await conexao.query({
        sql: sqlDeCarga(arquivo.layout, `${arquivo.layout.tabela}_nova`),
        infileStreamFactory: () => limpeza,
      });
      await fluxo;
      linhas += (r as { affectedRows: number }).affectedRows;
    }
  } finally {
    zip.close();
  }
  return linhas;
}

/** Runs `fn` with its own connection, tuned for bulk loading. */
async function comConexao<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
  const conexao = await novaConexao('leads');
  try {
    await conexao.query('SET SESSION unique_checks = 0, foreign_key_checks = 0');
    return await fn(conexao);
  } finally {
    await conexao.end().catch(() => undefined);
  }
}

export async function importarCnpj(diretorio: string, aoProgredir: (p: Progresso) => void = () => undefined): Promise<ResultadoDaImportacao> {
  const inicio = Date.now();
  const arquivos = await arquivosDoDiretorio(path.resolve(diretorio));
  const tabelas = tabelasTrocadas(arquivos);
  const id = uuidv7();
  const sequelize = banco('leads');
  const linhas: Record<string, number> = {};

  // One import at a time per database: a named lock held by this connection for the whole run.
  return comConexao(async (controle) => {
    const trava = `${nomeDoBanco('leads')}_importacao`.slice(0, 64);
    const [[{ obtida }]] = (await controle.query('SELECT GET_LOCK(?, 0) AS obtida', [trava])) as unknown as [[{ obtida: number }]];
    if (obtida !== 1) throw conflito('Outra importação do cadastro CNPJ está em andamento.');
    await sequelize.query('INSERT INTO importacao (id, diretorio, situacao, iniciada_em) VALUES (?, ?, ?, ?)', {
      replacements: [id, diretorio, 'em_andamento', dataSql(new Date())],
    });
    try {
      for (const t of tabelas) {
        await controle.query(`DROP TABLE IF EXISTS ${t}_nova`);
        await controle.query(`CREATE TABLE ${t}_nova LIKE ${t}`);
      }

      const total = arquivos.reduce((s, a) => s + a.bytes, 0) || 1;
      let feitos = 0;
      let ultimoAviso = 0;
      const avisar = (fase: Progresso['fase'], arquivo?: string, forcar = false) => {
        if (!forcar && Date.now() - ultimoAviso < 1000) return;
        ultimoAviso = Date.now();
        const percentual = fase === 'carregando' ? Math.min(90, Math.floor((feitos / total) * 90)) : fase === 'concluida' ? 100 : 95;
        aoProgredir({ fase, percentual, arquivo, linhas: { ...linhas } });
      };

      // Each table's files in order on a connection of its own; the tables load side by side.
      const porTabela = new Map<string, ArquivoDaImportacao[]>();
      for (const a of arquivos) porTabela.set(a.layout.tabela, [...(porTabela.get(a.layout.tabela) ?? []), a]);
      await Promise.all(
        [...porTabela.entries()].map(([tabela, lista]) =>
          comConexao(async (conexao) => {
            for (const arquivo of lista) {
              // Progress counts the zip's share of the total as its entries are read.
              const fracao = arquivo.bytes / (await tamanhoDescomprimido(arquivo.caminho));
              const n = await carregarZip(conexao, arquivo, (bytes) => {
                feitos += bytes * fracao;
                avisar('carregando', path.basename(arquivo.caminho));
              });
              linhas[tabela] = (linhas[tabela] ?? 0) + n;
              log.info({ arquivo: path.basename(arquivo.caminho), tabela, linhas: n }, 'arquivo carregado');
            }
          }),
        ),
      );

      if (tabelas.includes('estabelecimento_cnae_secundaria')) {
        avisar('indexando', undefined, true);
        const [r] = await controle.query(`INSERT IGNORE INTO estabelecimento_cnae_secundaria_nova (cnae, cnpj)
          SELECT j.cnae, e.cnpj FROM estabelecimento_nova e,
            JSON_TABLE(CONCAT('["', REPLACE(e.cnae_fiscal_secundaria, ',', '","'), '"]'), '$[*]' COLUMNS (cnae VARCHAR(7) PATH '$')) j
          WHERE e.cnae_fiscal_secundaria REGEXP '^[0-9A-Z]{7}(,[0-9A-Z]{7})*$'`);
        linhas.estabelecimento_cnae_secundaria = (r as { affectedRows: number }).affectedRows;
      }

      avisar('trocando', undefined, true);
      await controle.query(`RENAME TABLE ${tabelas.map((t) => `${t} TO ${t}_antiga, ${t}_nova TO ${t}`).join(', ')}`);
      await controle.query(`DROP TABLE ${tabelas.map((t) => `${t}_antiga`).join(', ')}`);
      await esquecerContagens();

      await sequelize.query('UPDATE importacao SET situacao = ?, linhas = ?, concluida_em = ? WHERE id = ?', {
        replacements: ['concluida', JSON.stringify(linhas), dataSql(new Date()), id],
      });
      avisar('concluida', undefined, true);
      const segundos = (Date.now() - inicio) / 1000;
      log.info({ id, linhas, segundos }, 'importação concluída');
      return { id, linhas, segundos };
    } catch (err) {
      for (const t of tabelas) await controle.query(`DROP TABLE IF EXISTS ${t}_nova`).catch(() => undefined);
      await sequelize
        .query('UPDATE importacao SET situacao = ?, erro = ?, concluida_em = ? WHERE id = ?', {
          replacements: ['falhou', String((err as Error).message).slice(0, 1000), dataSql(new Date()), id],
        })
        .catch(() => undefined);
      throw err;
    } finally {
      await controle.query('SELECT RELEASE_LOCK(?)', [trava]).catch(() => undefined);
    }
  });
}

async function tamanhoDescomprimido(caminho: string): Promise<number> {
  const { zip, entradas } = await entradasDoZip(caminho);
  zip.close();
  return entradas.reduce((s, e) => s + e.uncompressedSize, 0) || 1;
}
