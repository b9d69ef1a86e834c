import { QueryTypes } from 'sequelize';
import { Migracao } from '../../lib/database';
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
      // bytes owed a removal: written in the transaction that deletes the file's row, so a crash or
      // a storage failure after the commit leaves the removal to the sweep instead of losing it
      await qi.sequelize.query(`CREATE TABLE IF NOT EXISTS arquivo_a_apagar (
        arquivo_id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        criado_em DATETIME(3) NOT NULL,
        KEY arquivo_a_apagar_criado_em (criado_em)
      ) ${TABELA}`);
    },
  },
  {
    name: '0004-files-remover-apos',
    async up(qi) {
      // an upload's bytes are owed too, from before they are written until the row's insert clears
      // the line: each line says from when its bytes may go, a deletion's at once, an upload's once
      // it can no longer finish (the sweep never touches one in progress). Lines already there are
      // deletions', due at once (the default). Run again after a stop, it adds only what is missing
      const [coluna] = await qi.sequelize.query(
        "SELECT 1 AS n FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'arquivo_a_apagar' AND column_name = 'remover_apos'",
        { type: QueryTypes.SELECT },
      );
      if (!coluna) await qi.sequelize.query('ALTER TABLE arquivo_a_apagar ADD COLUMN remover_apos DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)');
    },
  },
];
