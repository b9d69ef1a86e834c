import { Migracao } from '../../lib/database';
import { criarContagemComDeltas, registrarDelta } from '../shared/contagem';
import { migracaoDeAcesso, migracaoDoSegredoDosTokens, migracaoDosNomesDePerfil } from '../shared/migracoes-de-acesso';
import { ASCII, existeNoEsquema, TABELA } from '../shared/sql';

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
      // a deleted file keeps its row (DESIGN §4: deletion is logical), its bytes removed. Its
      // Idempotency-Key stays on the record and is unique among live files only (a generated
      // column, NULL once deleted, as user e-mails are), so the key may name a new upload. The
      // column is VIRTUAL, and each step one the server does without copying the table nor
      // stopping its writes (the steps apart: MariaDB takes a virtual column in place only alone);
      // each step's column or index tells, run again, that it ran.
      const q = (sql: string) => qi.sequelize.query(sql);
      if (!(await existeNoEsquema(qi, 'arquivo', { coluna: 'deletado_em' }))) {
        await q('ALTER TABLE arquivo ADD COLUMN deletado_em DATETIME(3) NULL, ALGORITHM=INSTANT');
      }
      if (!(await existeNoEsquema(qi, 'arquivo', { coluna: 'chave_viva' }))) {
        await q(`ALTER TABLE arquivo ADD COLUMN chave_viva VARCHAR(255) ${ASCII}
          GENERATED ALWAYS AS (IF(deletado_em IS NULL, chave_de_idempotencia, NULL)) VIRTUAL, ALGORITHM=INPLACE, LOCK=NONE`);
      }
      // an application's live files, most recent first, read from an index that holds them apart
      // from its deleted ones, however many those are
      if (!(await existeNoEsquema(qi, 'arquivo', { indice: 'arquivo_chave_viva' }))) {
        await q(`ALTER TABLE arquivo DROP KEY arquivo_aplicativo, DROP KEY arquivo_chave_de_idempotencia,
          ADD KEY arquivo_aplicativo_vivo (aplicativo_id, deletado_em, criado_em, id),
          ADD UNIQUE KEY arquivo_chave_viva (aplicativo_id, chave_viva), ALGORITHM=INPLACE, LOCK=NONE`);
      }
    },
  },
  migracaoDosNomesDePerfil,
  migracaoDoSegredoDosTokens,
  {
    name: '0006-files-contagem',
    async up(qi) {
      // `GET /arquivo`'s total was counted on every page: 0.4 s for an application holding a
      // million files (the sales attachments). The triggers log each file that begins or stops
      // being live as a delta; the files-contagem job folds them into the base counts (lib/contagem.ts).
      const c = { base: 'arquivo_contagem', deltas: 'arquivo_contagem_delta', chave: 'aplicativo_id' };
      await criarContagemComDeltas(qi.sequelize, c, {
        tipoDaChave: `VARCHAR(64) ${ASCII}`,
        gatilhos: {
          arquivo_contagem_insercao: `AFTER INSERT ON arquivo FOR EACH ROW
            BEGIN IF NEW.deletado_em IS NULL THEN ${registrarDelta(c, 'NEW', '1')}; END IF; END`,
          arquivo_contagem_alteracao: `AFTER UPDATE ON arquivo FOR EACH ROW
            BEGIN
              IF NOT (OLD.aplicativo_id <=> NEW.aplicativo_id AND (OLD.deletado_em IS NULL) <=> (NEW.deletado_em IS NULL)) THEN
                IF OLD.deletado_em IS NULL THEN ${registrarDelta(c, 'OLD', '-1')}; END IF;
                IF NEW.deletado_em IS NULL THEN ${registrarDelta(c, 'NEW', '1')}; END IF;
              END IF;
            END`,
          arquivo_contagem_remocao: `AFTER DELETE ON arquivo FOR EACH ROW
            BEGIN IF OLD.deletado_em IS NULL THEN ${registrarDelta(c, 'OLD', '-1')}; END IF; END`,
        },
        contagens: 'SELECT aplicativo_id AS chave, COUNT(*) AS total FROM arquivo WHERE deletado_em IS NULL GROUP BY aplicativo_id',
      });
    },
  },
];
