import { config } from '../../config';
import { Migracao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { esperarRedis, redis } from '../../lib/redis';
import { migracaoDeAcesso, migracaoDoSegredoDosTokens, migracaoDosNomesDePerfil } from '../shared/migracoes-de-acesso';
import { ASCII, TABELA } from '../shared/sql';

/** The Receita's code tables: code and description (DESIGN §6). */
export const TABELAS_DE_CODIGOS = ['cnae', 'motivo', 'municipio', 'natureza_juridica', 'pais', 'qualificacao'] as const;

export const MIGRACOES_LEADS: Migracao[] = [
  migracaoDeAcesso,
  {
    name: '0002-cadastro-cnpj',
    async up(qi) {
      const q = (sql: string) => qi.sequelize.query(sql);
      for (const nome of TABELAS_DE_CODIGOS) {
        await q(`CREATE TABLE ${nome} (
          codigo VARCHAR(10) ${ASCII} NOT NULL PRIMARY KEY,
          descricao VARCHAR(255) NULL
        ) ${TABELA}`);
      }
      await q(`CREATE TABLE empresa (
        cnpj_basico CHAR(8) ${ASCII} NOT NULL PRIMARY KEY,
        razao_social VARCHAR(255) NULL,
        natureza_juridica VARCHAR(4) ${ASCII} NULL,
        qualificacao_responsavel VARCHAR(2) ${ASCII} NULL,
        capital_social DECIMAL(20,2) NULL,
        porte_empresa VARCHAR(2) ${ASCII} NULL,
        ente_federativo_responsavel VARCHAR(255) NULL,
        KEY empresa_natureza_juridica (natureza_juridica),
        KEY empresa_porte (porte_empresa),
        KEY empresa_capital_social (capital_social),
        FULLTEXT KEY empresa_razao_social (razao_social)
      ) ${TABELA}`);
      // The listing's indexes: a filter column, then the CNPJ, then the other common filter columns.
      // "WHERE uf = ? AND situacao_cadastral = ? ORDER BY cnpj LIMIT .. OFFSET .." then walks one
      // index in CNPJ order and checks the other filters inside it, without reading the rows, so a
      // deep page costs an index scan.
      await q(`CREATE TABLE estabelecimento (
        cnpj CHAR(14) ${ASCII} NOT NULL PRIMARY KEY,
        cnpj_basico CHAR(8) ${ASCII} NOT NULL,
        cnpj_ordem CHAR(4) ${ASCII} NOT NULL,
        cnpj_dv CHAR(2) ${ASCII} NOT NULL,
        identificador_matriz_filial VARCHAR(1) ${ASCII} NULL,
        nome_fantasia VARCHAR(255) NULL,
        situacao_cadastral VARCHAR(2) ${ASCII} NULL,
        data_situacao_cadastral CHAR(8) ${ASCII} NULL,
        motivo_situacao_cadastral VARCHAR(2) ${ASCII} NULL,
        nome_cidade_exterior VARCHAR(255) NULL,
        pais VARCHAR(3) ${ASCII} NULL,
        data_inicio_atividade CHAR(8) ${ASCII} NULL,
        cnae_fiscal_principal VARCHAR(7) ${ASCII} NULL,
        cnae_fiscal_secundaria VARCHAR(2000) ${ASCII} NULL,
        tipo_logradouro VARCHAR(60) NULL,
        logradouro VARCHAR(255) NULL,
        numero VARCHAR(60) NULL,
        complemento VARCHAR(255) NULL,
        bairro VARCHAR(255) NULL,
        cep VARCHAR(8) ${ASCII} NULL,
        uf VARCHAR(2) ${ASCII} NULL,
        municipio VARCHAR(4) ${ASCII} NULL,
        ddd_1 VARCHAR(4) ${ASCII} NULL,
        telefone_1 VARCHAR(12) ${ASCII} NULL,
        ddd_2 VARCHAR(4) ${ASCII} NULL,
        telefone_2 VARCHAR(12) ${ASCII} NULL,
        ddd_fax VARCHAR(4) ${ASCII} NULL,
        fax VARCHAR(12) ${ASCII} NULL,
        correio_eletronico VARCHAR(255) NULL,
        situacao_especial VARCHAR(255) NULL,
        data_situacao_especial CHAR(8) ${ASCII} NULL,
        KEY estabelecimento_cnpj_basico (cnpj_basico),
        KEY estabelecimento_uf (uf, cnpj, situacao_cadastral, cnae_fiscal_principal, municipio),
        KEY estabelecimento_situacao (situacao_cadastral, cnpj, uf, cnae_fiscal_principal, municipio),
        KEY estabelecimento_cnae (cnae_fiscal_principal, cnpj, uf, situacao_cadastral, municipio),
        KEY estabelecimento_municipio (municipio, cnpj, situacao_cadastral, cnae_fiscal_principal),
        FULLTEXT KEY estabelecimento_nome_fantasia (nome_fantasia)
      ) ${TABELA}`);
      await q(`CREATE TABLE estabelecimento_cnae_secundaria (
        cnae VARCHAR(7) ${ASCII} NOT NULL,
        cnpj CHAR(14) ${ASCII} NOT NULL,
        PRIMARY KEY (cnae, cnpj)
      ) ${TABELA}`);
      await q(`CREATE TABLE socio (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        cnpj_basico CHAR(8) ${ASCII} NOT NULL,
        identificador_socio VARCHAR(1) ${ASCII} NULL,
        nome_socio_razao_social VARCHAR(255) NULL,
        cnpj_cpf_socio VARCHAR(14) ${ASCII} NULL,
        qualificacao_socio VARCHAR(2) ${ASCII} NULL,
        data_entrada_sociedade CHAR(8) ${ASCII} NULL,
        pais VARCHAR(3) ${ASCII} NULL,
        representante_legal VARCHAR(14) ${ASCII} NULL,
        nome_representante VARCHAR(255) NULL,
        qualificacao_representante VARCHAR(2) ${ASCII} NULL,
        faixa_etaria VARCHAR(1) ${ASCII} NULL,
        KEY socio_cnpj_basico (cnpj_basico)
      ) ${TABELA}`);
      await q(`CREATE TABLE simples (
        cnpj_basico CHAR(8) ${ASCII} NOT NULL PRIMARY KEY,
        opcao_pelo_simples VARCHAR(1) ${ASCII} NULL,
        data_opcao_simples CHAR(8) ${ASCII} NULL,
        data_exclusao_simples CHAR(8) ${ASCII} NULL,
        opcao_pelo_mei VARCHAR(1) ${ASCII} NULL,
        data_opcao_mei CHAR(8) ${ASCII} NULL,
        data_exclusao_mei CHAR(8) ${ASCII} NULL
      ) ${TABELA}`);
      await q(`CREATE TABLE importacao (
        id CHAR(36) NOT NULL PRIMARY KEY,
        diretorio VARCHAR(1000) NOT NULL,
        situacao VARCHAR(20) NOT NULL,
        linhas TEXT NULL,
        erro VARCHAR(1000) NULL,
        iniciada_em DATETIME(3) NOT NULL,
        concluida_em DATETIME(3) NULL,
        KEY importacao_iniciada (iniciada_em)
      ) ${TABELA}`);
    },
  },
  {
    name: '0003-estabelecimento-cep',
    async up(qi) {
      // GET /api/empresas?cep=: a whole CEP or a long prefix matches a handful of establishments,
      // which without an index meant reading the whole registry in CNPJ order (a 503 on the real
      // data); a short prefix still walks in CNPJ order, where matches are dense. Each import
      // builds it again on its fresh copy, as every index of the live table.
      await qi.sequelize.query('CREATE INDEX estabelecimento_cep ON estabelecimento (cep)');
    },
  },
  {
    name: '0004-estabelecimento-data-inicio',
    async up(qi) {
      // GET /api/empresas?data_inicio_de=&data_inicio_ate=: a page fills quickly walking in CNPJ
      // order, but counting a narrow range (the companies of a week) read the whole registry, so
      // its total came back estimated. With the CNPJ in the index, a range's page and its count
      // read the index alone; a wide range still walks in CNPJ order (the database picks).
      await qi.sequelize.query('CREATE INDEX estabelecimento_data_inicio ON estabelecimento (data_inicio_atividade, cnpj)');
    },
  },
  {
    name: '0005-geracao-dos-dados',
    async up(qi) {
      // The data's generation (api/leads/geracao.ts): one row an import swaps in with its tables, so
      // it changes in the same instant as the data. A fresh UUID per database: a database made again
      // beside the same Redis never reads what was cached about the old one. Run again after a stop
      // midway, it adds only what is missing and keeps a generation already there.
      const q = (sql: string) => qi.sequelize.query(sql);
      await q(`CREATE TABLE IF NOT EXISTS geracao_dos_dados (
        id TINYINT NOT NULL PRIMARY KEY,
        geracao CHAR(36) ${ASCII} NOT NULL
      ) ${TABELA}`);
      await q('INSERT IGNORE INTO geracao_dos_dados (id, geracao) VALUES (1, UUID())');
    },
  },
  {
    name: '0006-geracao-antiga-fora-do-redis',
    async up() {
      // Before 0005 the generation was a Redis counter, which nothing reads since and no expiry
      // would ever take. Deleting a key that is not there does nothing, so this may run again (a
      // database made again beside the same Redis). Redis out of reach does not hold up the
      // migrations for a few bytes: a warning names the key to delete by hand.
      const chave = `${config().queuePrefix}:leads:geracao`;
      try {
        await esperarRedis();
        await redis('produtor').del(chave);
      } catch (err) {
        logger('migracoes').warn({ erro: (err as Error).message, chave }, 'geração antiga ficou no Redis: apague a chave com DEL');
      }
    },
  },
  migracaoDosNomesDePerfil,
  migracaoDoSegredoDosTokens,
  {
    name: '0007-estabelecimento-matriz-nas-listagens',
    async up(qi) {
      // GET /api/empresas?matriz_filial=: the listing's indexes held every common filter but this
      // one, so a count or a deep page with it read each row the others left (a first page of São
      // Paulo's active headquarters waited about 1 s for its count among a million establishments;
      // with the column in the index, 0.1 s). One byte per entry; each import's copy takes the
      // indexes as the live table has them. One statement, in place: the registry stays readable
      // and the old index serves until the new one replaces it (a server that cannot fails it
      // rather than copy the table).
      const listagens: [string, string][] = [
        ['estabelecimento_uf', 'uf, cnpj, situacao_cadastral, cnae_fiscal_principal, municipio'],
        ['estabelecimento_situacao', 'situacao_cadastral, cnpj, uf, cnae_fiscal_principal, municipio'],
        ['estabelecimento_cnae', 'cnae_fiscal_principal, cnpj, uf, situacao_cadastral, municipio'],
        ['estabelecimento_municipio', 'municipio, cnpj, situacao_cadastral, cnae_fiscal_principal'],
      ];
      await qi.sequelize.query(
        `ALTER TABLE estabelecimento ${listagens
          .map(([nome, colunas]) => `DROP INDEX ${nome}, ADD INDEX ${nome} (${colunas}, identificador_matriz_filial)`)
          .join(', ')}, ALGORITHM=INPLACE, LOCK=NONE`,
      );
    },
  },
];
