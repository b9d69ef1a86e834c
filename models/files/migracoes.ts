import { Migracao } from '../../lib/database';
import { migracaoDeAcesso } from '../shared/migracoes-de-acesso';
import { ASCII, TABELA } from '../shared/sql';

export const MIGRACOES_FILES: Migracao[] = [
  {
    name: '0001-files',
    async up(qi) {
      const q = (sql: string) => qi.sequelize.query(sql);
      // an application's page, most recent first, walks arquivo_aplicativo backwards
      await q(`CREATE TABLE arquivo (
        id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        aplicativo_id VARCHAR(64) ${ASCII} NOT NULL,
        nome VARCHAR(255) NOT NULL,
        tipo_mime VARCHAR(255) NOT NULL,
        tamanho BIGINT NOT NULL,
        sha256 CHAR(64) ${ASCII} NOT NULL,
        criado_em DATETIME(3) NOT NULL,
        KEY arquivo_aplicativo (aplicativo_id, criado_em, id)
      ) ${TABELA}`);
      await q(`CREATE TABLE segredo_de_assinatura (
        nome VARCHAR(64) NOT NULL PRIMARY KEY,
        valor VARCHAR(200) NOT NULL,
        criado_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  {
    name: '0002-files-chave-de-idempotencia',
    async up(qi) {
      // POST /arquivo's Idempotency-Key, one per application while its file exists: a client that
      // lost the answer sends again and gets the first file instead of a second copy
      await qi.sequelize.query(
        `ALTER TABLE arquivo ADD COLUMN chave_de_idempotencia VARCHAR(255) ${ASCII} NULL,
           ADD UNIQUE KEY arquivo_chave_de_idempotencia (aplicativo_id, chave_de_idempotencia)`,
      );
    },
  },
  {
    name: '0003-files-arquivo-a-apagar',
    async up(qi) {
      // bytes owed a removal, from when they may go: a deleted file's (written in the transaction
      // that deletes its row) at once; an upload's (written before its bytes, cleared by its row's
      // insert) once it can no longer finish. A crash or a storage failure anywhere between leaves
      // the removal to the sweep instead of losing it, and the sweep never takes an upload under way
      await qi.sequelize.query(`CREATE TABLE IF NOT EXISTS arquivo_a_apagar (
        arquivo_id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        criado_em DATETIME(3) NOT NULL,
        remover_apos DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  {
    name: '0004-files-marca-do-armazenamento',
    async up(qi) {
      // the mark of the store the files' bytes are in (api/files/marca.ts): one row
      await qi.sequelize.query(`CREATE TABLE IF NOT EXISTS marca_do_armazenamento (
        id TINYINT UNSIGNED NOT NULL PRIMARY KEY,
        marca CHAR(36) ${ASCII} NOT NULL,
        criada_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  // the access module (DESIGN §3), mounted later than the service's first tables
  migracaoDeAcesso,
  {
    name: '0005-files-exclusao-logica',
    async up(qi) {
      // a deleted file keeps its row (DESIGN §4: deletion is logical), its bytes removed; an
      // application's live files, most recent first, are read from an index that holds them apart
      // from its deleted ones, however many those are
      const [colunas] = await qi.sequelize.query("SHOW COLUMNS FROM arquivo LIKE 'deletado_em'");
      if (!(colunas as unknown[]).length) {
        await qi.sequelize.query(
          'ALTER TABLE arquivo ADD COLUMN deletado_em DATETIME(3) NULL, DROP KEY arquivo_aplicativo, ADD KEY arquivo_aplicativo (aplicativo_id, deletado_em, criado_em, id)',
        );
      }
    },
  },
];
