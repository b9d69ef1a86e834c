import { Migracao } from '../../lib/database';
import { migracaoDeAcesso } from '../shared/migracoes-de-acesso';

const TABELA = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';
/** Codes and CNPJ parts: ASCII, compared byte by byte (an alphanumeric CNPJ is stored upper case). */
const CODIGO = 'CHARACTER SET ascii COLLATE ascii_bin';

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
          codigo VARCHAR(10) ${CODIGO} NOT NULL PRIMARY KEY,
          descricao VARCHAR(255) NULL
        ) ${TABELA}`);
      }
      await q(`CREATE TABLE empresa (
        cnpj_basico CHAR(8) ${CODIGO} NOT NULL PRIMARY KEY,
        razao_social VARCHAR(255) NULL,
        natureza_juridica VARCHAR(4) ${CODIGO} NULL,
        qualificacao_responsavel VARCHAR(2) ${CODIGO} NULL,
        capital_social DECIMAL(20,2) NULL,
        porte_empresa VARCHAR(2) ${CODIGO} NULL,
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
        cnpj CHAR(14) ${CODIGO} NOT NULL PRIMARY KEY,
        cnpj_basico CHAR(8) ${CODIGO} NOT NULL,
        cnpj_ordem CHAR(4) ${CODIGO} NOT NULL,
        cnpj_dv CHAR(2) ${CODIGO} NOT NULL,
        identificador_matriz_filial VARCHAR(1) ${CODIGO} NULL,
        nome_fantasia VARCHAR(255) NULL,
        situacao_cadastral VARCHAR(2) ${CODIGO} NULL,
        data_situacao_cadastral CHAR(8) ${CODIGO} NULL,
        motivo_situacao_cadastral VARCHAR(2) ${CODIGO} NULL,
        nome_cidade_exterior VARCHAR(255) NULL,
        pais VARCHAR(3) ${CODIGO} NULL,
        data_inicio_atividade CHAR(8) ${CODIGO} NULL,
        cnae_fiscal_principal VARCHAR(7) ${CODIGO} NULL,
        cnae_fiscal_secundaria VARCHAR(2000) ${CODIGO} NULL,
        tipo_logradouro VARCHAR(60) NULL,
        logradouro VARCHAR(255) NULL,
        numero VARCHAR(60) NULL,
        complemento VARCHAR(255) NULL,
        bairro VARCHAR(255) NULL,
        cep VARCHAR(8) ${CODIGO} NULL,
        uf VARCHAR(2) ${CODIGO} NULL,
        municipio VARCHAR(4) ${CODIGO} NULL,
        ddd_1 VARCHAR(4) ${CODIGO} NULL,
        telefone_1 VARCHAR(12) ${CODIGO} NULL,
        ddd_2 VARCHAR(4) ${CODIGO} NULL,
        telefone_2 VARCHAR(12) ${CODIGO} NULL,
        ddd_fax VARCHAR(4) ${CODIGO} NULL,
        fax VARCHAR(12) ${CODIGO} NULL,
        correio_eletronico VARCHAR(255) NULL,
        situacao_especial VARCHAR(255) NULL,
        data_situacao_especial CHAR(8) ${CODIGO} NULL,
        KEY estabelecimento_cnpj_basico (cnpj_basico),
        KEY estabelecimento_uf (uf, cnpj, situacao_cadastral, cnae_fiscal_principal, municipio),
        KEY estabelecimento_situacao (situacao_cadastral, cnpj, uf, cnae_fiscal_principal, municipio),
        KEY estabelecimento_cnae (cnae_fiscal_principal, cnpj, uf, situacao_cadastral, municipio),
        KEY estabelecimento_municipio (municipio, cnpj, situacao_cadastral, cnae_fiscal_principal),
        FULLTEXT KEY estabelecimento_nome_fantasia (nome_fantasia)
      ) ${TABELA}`);
      await q(`CREATE TABLE estabelecimento_cnae_secundaria (
        cnae VARCHAR(7) ${CODIGO} NOT NULL,
        cnpj CHAR(14) ${CODIGO} NOT NULL,
        PRIMARY KEY (cnae, cnpj)
      ) ${TABELA}`);
      await q(`CREATE TABLE socio (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        cnpj_basico CHAR(8) ${CODIGO} NOT NULL,
        identificador_socio VARCHAR(1) ${CODIGO} NULL,
        nome_socio_razao_social VARCHAR(255) NULL,
        cnpj_cpf_socio VARCHAR(14) ${CODIGO} NULL,
        qualificacao_socio VARCHAR(2) ${CODIGO} NULL,
        data_entrada_sociedade CHAR(8) ${CODIGO} NULL,
        pais VARCHAR(3) ${CODIGO} NULL,
        representante_legal VARCHAR(14) ${CODIGO} NULL,
        nome_representante VARCHAR(255) NULL,
        qualificacao_representante VARCHAR(2) ${CODIGO} NULL,
        faixa_etaria VARCHAR(1) ${CODIGO} NULL,
        KEY socio_cnpj_basico (cnpj_basico)
      ) ${TABELA}`);
      await q(`CREATE TABLE simples (
        cnpj_basico CHAR(8) ${CODIGO} NOT NULL PRIMARY KEY,
        opcao_pelo_simples VARCHAR(1) ${CODIGO} NULL,
        data_opcao_simples CHAR(8) ${CODIGO} NULL,
        data_exclusao_simples CHAR(8) ${CODIGO} NULL,
        opcao_pelo_mei VARCHAR(1) ${CODIGO} NULL,
        data_opcao_mei CHAR(8) ${CODIGO} NULL,
        data_exclusao_mei CHAR(8) ${CODIGO} NULL
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
];
