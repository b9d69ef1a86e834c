import { Migracao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { adicionarColuna, existeNoEsquema, NOMES_UNICOS, TABELA } from '../shared/sql';

export const MIGRACOES_IDENTITY: Migracao[] = [
  {
    name: '0001-identity',
    async up(qi) {
      const q = (sql: string) => qi.sequelize.query(sql);
      for (const cadastro of ['setor', 'cargo', 'funcao']) {
        await q(`CREATE TABLE ${cadastro} (
          id CHAR(36) NOT NULL PRIMARY KEY,
          nome VARCHAR(200) NOT NULL,
          criado_em DATETIME(3) NOT NULL,
          atualizado_em DATETIME(3) NOT NULL,
          UNIQUE KEY ${cadastro}_nome (nome)
        ) ${TABELA}`);
      }
      // e-mail unique among users not deleted: a deleted user's address may be used again
      await q(`CREATE TABLE usuario (
        id CHAR(36) NOT NULL PRIMARY KEY,
        nome VARCHAR(200) NOT NULL,
        email VARCHAR(254) NOT NULL,
        perfil VARCHAR(20) NOT NULL,
        master BOOLEAN NOT NULL DEFAULT FALSE,
        email_verificado BOOLEAN NOT NULL DEFAULT FALSE,
        dois_fatores_ativo BOOLEAN NOT NULL DEFAULT FALSE,
        senha_hash VARCHAR(255) NULL,
        setor_id CHAR(36) NULL,
        cargo_id CHAR(36) NULL,
        funcao_id CHAR(36) NULL,
        imagem VARCHAR(1000) NULL,
        bloqueado_ate DATETIME(3) NULL,
        ultimo_login_em DATETIME(3) NULL,
        falhas_de_login INT NOT NULL DEFAULT 0,
        criado_em DATETIME(3) NOT NULL,
        atualizado_em DATETIME(3) NOT NULL,
        deletado_em DATETIME(3) NULL,
        email_unico VARCHAR(254) GENERATED ALWAYS AS (IF(deletado_em IS NULL, email, NULL)) STORED,
        UNIQUE KEY usuario_email_unico (email_unico),
        KEY usuario_recentes (deletado_em, criado_em, id),
        KEY usuario_nome (deletado_em, nome, id),
        CONSTRAINT usuario_setor FOREIGN KEY (setor_id) REFERENCES setor (id),
        CONSTRAINT usuario_cargo FOREIGN KEY (cargo_id) REFERENCES cargo (id),
        CONSTRAINT usuario_funcao FOREIGN KEY (funcao_id) REFERENCES funcao (id)
      ) ${TABELA}`);
      await q(`CREATE TABLE aplicativo (
        id CHAR(36) NOT NULL PRIMARY KEY,
        nome VARCHAR(200) NOT NULL,
        descricao VARCHAR(1000) NULL,
        segredo_hash CHAR(64) NOT NULL,
        ativo BOOLEAN NOT NULL DEFAULT TRUE,
        servico_da_suite VARCHAR(20) NULL,
        criado_em DATETIME(3) NOT NULL,
        atualizado_em DATETIME(3) NOT NULL,
        deletado_em DATETIME(3) NULL,
        UNIQUE KEY aplicativo_servico_da_suite (servico_da_suite),
        KEY aplicativo_nome (deletado_em, nome, id)
      ) ${TABELA}`);
      await q(`CREATE TABLE chave_de_assinatura (
        kid VARCHAR(64) NOT NULL PRIMARY KEY,
        chave_privada_pem TEXT NOT NULL,
        criada_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
      await q(`CREATE TABLE evento_pendente (
        id CHAR(36) NOT NULL PRIMARY KEY,
        tipo VARCHAR(100) NOT NULL,
        versao INT NOT NULL DEFAULT 1,
        dados LONGTEXT NOT NULL,
        enviado_em DATETIME(3) NULL,
        tentativas INT NOT NULL DEFAULT 0,
        ultimo_erro VARCHAR(1000) NULL,
        criado_em DATETIME(3) NOT NULL,
        KEY evento_pendente_nao_enviado (enviado_em, criado_em)
      ) ${TABELA}`);
    },
  },
  {
    name: '0002-identity-evento-do-colaborador',
    async up(qi) {
      // an event is sent after its collaborator's older unsent ones (api/identity/outbox.ts):
      // found by this index, not by reading every unsent event's JSON on every try
      // run again after a stop midway, it goes on from where it was (its index last: there, it ended)
      if (await existeNoEsquema(qi, 'evento_pendente', { indice: 'evento_pendente_colaborador' })) return;
      await adicionarColuna(qi, 'evento_pendente', 'colaborador_id', 'CHAR(36) NULL AFTER dados');
      await qi.sequelize.query("UPDATE evento_pendente SET colaborador_id = JSON_VALUE(dados, '$.id') WHERE colaborador_id IS NULL");
      await qi.sequelize.query('CREATE INDEX evento_pendente_colaborador ON evento_pendente (colaborador_id, enviado_em, criado_em)');
    },
  },
  {
    name: '0003-identity-email-unico-binario',
    async up(qi) {
      // the table's collation also ignores accents (josé = jose, ß = ss): two addresses, two
      // mailboxes. The unique key (and the lookups, api/identity/usuarios.ts porEmail) compare the
      // address in lower case byte by byte: its case alone still makes no other address
      await qi.sequelize.query(`ALTER TABLE usuario MODIFY email_unico VARCHAR(254) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
        GENERATED ALWAYS AS (IF(deletado_em IS NULL, LOWER(email), NULL)) STORED`);
    },
  },
  {
    name: '0004-identity-sequencia-do-evento',
    async up(qi) {
      // a collaborator's events are sent in the order the database stored them, not by
      // `criado_em`, which each identity process writes from its own clock: two processes whose
      // clocks disagree sent two quick changes of one person in the wrong order. Events already
      // stored are numbered in their old order first, then the database's counter goes on from there.
      // Run again after a stop midway, it adds only what is missing. Processes of the earlier
      // version store events (no `sequencia`) meanwhile: the table is held from the numbering to
      // the counter, else one stored in between would take a number of the counter's own choosing
      // (another event's, failing the migration, or one before older events)
      // the last statement is one: its key there means it ran to its end
      if (await existeNoEsquema(qi, 'evento_pendente', { indice: 'evento_pendente_sequencia' })) return;
      await adicionarColuna(qi, 'evento_pendente', 'sequencia', 'BIGINT NULL AFTER id');
      await qi.sequelize.transaction(async (transaction) => {
        const q = (sql: string) => qi.sequelize.query(sql, { transaction });
        await q('LOCK TABLES evento_pendente WRITE');
        try {
          await q('SET @sequencia := (SELECT COALESCE(MAX(sequencia), 0) FROM evento_pendente)');
          await q('UPDATE evento_pendente SET sequencia = (@sequencia := @sequencia + 1) WHERE sequencia IS NULL ORDER BY criado_em, id');
          await q(`ALTER TABLE evento_pendente
                     MODIFY sequencia BIGINT NOT NULL AUTO_INCREMENT,
                     ADD UNIQUE KEY evento_pendente_sequencia (sequencia),
                     DROP INDEX evento_pendente_colaborador,
                     ADD INDEX evento_pendente_colaborador (colaborador_id, enviado_em, sequencia)`);
        } finally {
          await q('UNLOCK TABLES');
        }
      });
    },
  },
  {
    name: '0005-identity-master-emails-publicados',
    async up(qi) {
      // the MASTER_EMAILS whose effect on `e_master` subscribers were last told of (api/identity/
      // usuarios.ts publicarMastersDoAmbiente): one row, locked by each start that compares it.
      // An install upgraded to this starts from none: its listed collaborators are published once
      await qi.sequelize.query(`CREATE TABLE IF NOT EXISTS master_emails_publicados (
        id TINYINT NOT NULL PRIMARY KEY,
        emails LONGTEXT NOT NULL
      ) ${TABELA}`);
      await qi.sequelize.query("INSERT IGNORE INTO master_emails_publicados (id, emails) VALUES (1, '[]')");
    },
  },
  {
    name: '0006-identity-tokens-validos-desde',
    async up(qi) {
      // the moment of a user's last password change and of an application's last secret renewal:
      // identity refuses their tokens issued before it (api/identity/login.ts autenticadorDoIdentity).
      // NULL, as every row starts, refuses none. Appended last, the columns cost no table copy; run
      // again after a stop between the two, the first is there
      for (const tabela of ['usuario', 'aplicativo']) {
        if (!(await existeNoEsquema(qi, tabela, { coluna: 'tokens_validos_desde' }))) {
          await qi.sequelize.query(`ALTER TABLE ${tabela} ADD COLUMN tokens_validos_desde DATETIME(3) NULL`);
        }
      }
    },
  },
  {
    name: '0007-identity-varredura-por-sequencia',
    async up(qi) {
      // the sweep walks the unsent events by `sequencia` from where its last run stopped (api/
      // identity/outbox.ts varrer): by this index it reads one page, where the one by criado_em
      // left it to sort every unsent event on each run. Nothing else read that one (the purge's
      // range on enviado_em is served by this). One statement: its new key means it ran
      if (await existeNoEsquema(qi, 'evento_pendente', { indice: 'evento_pendente_nao_enviado_por_sequencia' })) return;
      await qi.sequelize.query(`ALTER TABLE evento_pendente
                                  DROP INDEX evento_pendente_nao_enviado,
                                  ADD INDEX evento_pendente_nao_enviado_por_sequencia (enviado_em, sequencia)`);
    },
  },
  {
    name: '0008-identity-emails-nfc',
    async up(qi) {
      // addresses are kept composed (NFC) since the routes compose them: one stored decomposed
      // (`e` and a combining accent) is composed here, unless a live user already holds the composed
      // form (two accounts of one mailbox): that one is logged and left for a person to settle. The
      // database cannot compose text, so the rows are read; run again, none is left to change
      const [linhas] = await qi.sequelize.query('SELECT id, email, deletado_em IS NULL AS vivo FROM usuario');
      const usuarios = linhas as { id: string; email: string; vivo: number }[];
      const vivos = new Set(usuarios.filter((u) => Number(u.vivo)).map((u) => u.email));
      for (const u of usuarios) {
        const composto = u.email.normalize('NFC');
        if (composto === u.email) continue;
        if (Number(u.vivo) && vivos.has(composto)) {
          logger('migracoes').warn({ usuario_id: u.id }, 'e-mail decomposto de um usuário cuja forma composta outro usuário vivo tem: deixado como está');
          continue;
        }
        await qi.sequelize.query('UPDATE usuario SET email = ? WHERE id = ?', { replacements: [composto, u.id] });
        if (Number(u.vivo)) vivos.add(composto);
      }
    },
  },
  {
    name: '0009-identity-primeira-falha-de-login',
    async up(qi) {
      // a user's count of failed logins lasts a day from its first failure, as an unknown e-mail's
      // (api/identity/login.ts): appended last, no table copy. Counts kept before have no first
      // failure and start over at the next one
      await adicionarColuna(qi, 'usuario', 'primeira_falha_de_login_em', 'DATETIME(3) NULL');
    },
  },
  {
    name: '0010-identity-nomes-distintos-por-emoji',
    async up(qi) {
      // their unique keys rebuilt on the new collation (NOMES_UNICOS); run again, it changes nothing
      for (const cadastro of ['setor', 'cargo', 'funcao']) {
        await qi.sequelize.query(`ALTER TABLE ${cadastro} MODIFY nome VARCHAR(200) ${NOMES_UNICOS} NOT NULL`);
      }
    },
  },
];
