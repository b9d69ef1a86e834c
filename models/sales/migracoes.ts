import { AGORA_NO_BANCO, dataSql, LEITURA_CONFIRMADA, Migracao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { migracaoDeAcesso, migracaoDoSegredoDosTokens, migracaoDosNomesDePerfil } from '../shared/migracoes-de-acesso';
import { adicionarColuna, ASCII, existeNoEsquema, semAcentos, TABELA } from '../shared/sql';

const MOMENTOS = `criado_em DATETIME(3) NOT NULL,
        atualizado_em DATETIME(3) NOT NULL`;

export const MIGRACOES_SALES: Migracao[] = [
  migracaoDeAcesso,
  {
    name: '0002-sales',
    async up(qi) {
      const q = (sql: string) => qi.sequelize.query(sql);
      await q(`CREATE TABLE segredo (
        nome VARCHAR(64) NOT NULL PRIMARY KEY,
        valor VARCHAR(200) NOT NULL,
        criado_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
      // The systems that call the webhooks (DESIGN §7, §10). The webhook token is kept as a keyed
      // hash (HMAC under the service's key: at least 32 characters, it needs no slow hash); the
      // secrets the service must use itself (the HMAC key, the chat platform's API token) are
      // encrypted (api/sales/cifra.ts).
      await q(`CREATE TABLE config_system (
        id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        tipo VARCHAR(12) ${ASCII} NOT NULL,
        nome VARCHAR(120) NOT NULL,
        token_hash CHAR(64) ${ASCII} NOT NULL,
        segredo_hmac_cifrado VARCHAR(1000) ${ASCII} NULL,
        url VARCHAR(500) NULL,
        conta_id BIGINT NULL,
        token_api_cifrado VARCHAR(1000) ${ASCII} NULL,
        numero VARCHAR(20) ${ASCII} NULL,
        ativo BOOLEAN NOT NULL DEFAULT TRUE,
        ${MOMENTOS},
        deletado_em DATETIME(3) NULL,
        KEY config_system_tipo (tipo, nome, id),
        KEY config_system_numero (numero)
      ) ${TABELA}`);
      await q(`CREATE TABLE cliente (
        id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        razao_social VARCHAR(255) NOT NULL,
        cnpj VARCHAR(14) ${ASCII} NULL,
        telefone VARCHAR(40) NULL,
        email VARCHAR(254) NULL,
        ${MOMENTOS},
        deletado_em DATETIME(3) NULL,
        KEY cliente_razao_social (razao_social, id)
      ) ${TABELA}`);
      await q(`CREATE TABLE robo (
        id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        nome VARCHAR(120) NOT NULL,
        descricao VARCHAR(500) NULL,
        suporte_usuario_id BIGINT NULL,
        suporte_bot_id BIGINT NULL,
        ${MOMENTOS},
        deletado_em DATETIME(3) NULL,
        KEY robo_nome (nome, id),
        KEY robo_suporte_usuario (suporte_usuario_id),
        KEY robo_suporte_bot (suporte_bot_id)
      ) ${TABELA}`);
      // One live record per chat-platform conversation (the generated key is NULL once deleted, so
      // a message after a deletion starts a new record). The listing walks conversa_recentes (or
      // conversa_status_recentes) backwards; the hand-over trigger reads conversa_espera
      // (conversa_espera_do_sistema since 0007).
      // `contato_busca` is the contact's name in lower case and the phone's digits, compared byte
      // by byte: the contact searches scan it inside conversa_busca, without reading the rows.
      await q(`CREATE TABLE conversa (
        id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        config_system_suporte_id CHAR(36) ${ASCII} NOT NULL,
        suporte_conversa_id BIGINT NOT NULL,
        suporte_conta_id BIGINT NULL,
        suporte_contato_id BIGINT NULL,
        suporte_endereco_conversa VARCHAR(700) NULL,
        config_system_mensageiro_id CHAR(36) ${ASCII} NULL,
        config_system_gateway_id CHAR(36) ${ASCII} NULL,
        cliente_id CHAR(36) ${ASCII} NULL,
        robo_id CHAR(36) ${ASCII} NULL,
        etapa_id VARCHAR(64) NULL,
        contato_nome VARCHAR(255) NOT NULL,
        contato_telefone VARCHAR(40) NOT NULL,
        contato_telefone_digitos VARCHAR(40) ${ASCII} NOT NULL,
        status VARCHAR(10) ${ASCII} NOT NULL,
        ultima_mensagem MEDIUMTEXT NOT NULL,
        ultima_mensagem_em DATETIME(3) NULL,
        ultima_mensagem_do_contato_em DATETIME(3) NULL,
        ultima_mensagem_do_robo_em DATETIME(3) NULL,
        transferida_em DATETIME(3) NULL,
        transferida_motivo VARCHAR(30) NULL,
        quantidade_mensagens INT NOT NULL DEFAULT 0,
        ${MOMENTOS},
        deletado_em DATETIME(3) NULL,
        suporte_conversa_viva BIGINT GENERATED ALWAYS AS (IF(deletado_em IS NULL, suporte_conversa_id, NULL)) STORED,
        contato_busca VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
          GENERATED ALWAYS AS (CONCAT(LOWER(contato_nome), '\\n', contato_telefone_digitos)) STORED,
        UNIQUE KEY conversa_do_suporte (config_system_suporte_id, suporte_conversa_viva),
        KEY conversa_recentes (deletado_em, ultima_mensagem_em, id),
        KEY conversa_status_recentes (status, deletado_em, ultima_mensagem_em, id),
        KEY conversa_contato (deletado_em, contato_nome, id, contato_busca),
        KEY conversa_busca (deletado_em, contato_busca, cliente_id, ultima_mensagem_em),
        KEY conversa_telefone (contato_telefone_digitos),
        KEY conversa_suporte_conversa (suporte_conversa_id),
        KEY conversa_cliente (cliente_id),
        KEY conversa_robo (robo_id),
        KEY conversa_gateway (config_system_gateway_id),
        KEY conversa_espera (status, deletado_em, ultima_mensagem_do_contato_em)
      ) ${TABELA}`);
      // Live conversations per status, for the listing's total without counting 200,000 rows. The
      // triggers below log each change as a delta row (no row every writer must lock, so writers of
      // many conversations at once never deadlock on a counter); the sales-contagem job folds the
      // deltas into conversa_contagem every few seconds. The total is the sum of both.
      await q(`CREATE TABLE conversa_contagem (
        status VARCHAR(10) ${ASCII} NOT NULL PRIMARY KEY,
        total BIGINT NOT NULL
      ) ${TABELA}`);
      await q(`CREATE TABLE conversa_contagem_delta (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        status VARCHAR(10) ${ASCII} NOT NULL,
        delta INT NOT NULL
      ) ${TABELA}`);
      const registrar = (linha: 'NEW' | 'OLD', delta: 1 | -1) =>
        `INSERT INTO conversa_contagem_delta (status, delta) VALUES (${linha}.status, ${delta})`;
      await q(`CREATE TRIGGER conversa_contagem_insercao AFTER INSERT ON conversa FOR EACH ROW
        BEGIN IF NEW.deletado_em IS NULL THEN ${registrar('NEW', 1)}; END IF; END`);
      await q(`CREATE TRIGGER conversa_contagem_alteracao AFTER UPDATE ON conversa FOR EACH ROW
        BEGIN
          IF NOT (OLD.status <=> NEW.status AND OLD.deletado_em <=> NEW.deletado_em) THEN
            IF OLD.deletado_em IS NULL THEN ${registrar('OLD', -1)}; END IF;
            IF NEW.deletado_em IS NULL THEN ${registrar('NEW', 1)}; END IF;
          END IF;
        END`);
      await q(`CREATE TRIGGER conversa_contagem_remocao AFTER DELETE ON conversa FOR EACH ROW
        BEGIN IF OLD.deletado_em IS NULL THEN ${registrar('OLD', -1)}; END IF; END`);
      // A message is stored once per conversation record (a repeated webhook changes nothing).
      // Clustered by conversation: a conversation's messages sit together, for its listing and
      // for the text search that reads them conversation by conversation. Nothing reads a message
      // by its id, so the id has no index.
      await q(`CREATE TABLE conversa_mensagem (
        conversa_id CHAR(36) ${ASCII} NOT NULL,
        suporte_mensagem_id BIGINT NOT NULL,
        id CHAR(36) ${ASCII} NOT NULL,
        autor VARCHAR(10) ${ASCII} NOT NULL,
        conteudo MEDIUMTEXT NOT NULL,
        etapa_id VARCHAR(64) NULL,
        criada_em DATETIME(3) NOT NULL,
        quantidade_anexos INT NOT NULL DEFAULT 0,
        ${MOMENTOS},
        PRIMARY KEY (conversa_id, suporte_mensagem_id)
      ) ${TABELA}`);
      await q(`CREATE TABLE anexo_da_mensagem (
        id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        mensagem_id CHAR(36) ${ASCII} NOT NULL,
        conversa_id CHAR(36) ${ASCII} NOT NULL,
        suporte_anexo_id BIGINT NULL,
        endereco VARCHAR(2000) NOT NULL,
        nome VARCHAR(255) NOT NULL,
        tipo VARCHAR(30) NOT NULL,
        arquivo_id CHAR(36) ${ASCII} NULL,
        tipo_mime VARCHAR(255) NULL,
        tamanho BIGINT NULL,
        tentativas INT NOT NULL DEFAULT 0,
        ultimo_erro VARCHAR(500) NULL,
        ${MOMENTOS},
        KEY anexo_da_mensagem_mensagem (mensagem_id),
        KEY anexo_da_mensagem_conversa (conversa_id),
        KEY anexo_da_mensagem_pendente (arquivo_id, tentativas)
      ) ${TABELA}`);
      // Copies in file storage whose attachment is gone (its conversation deleted): written in the
      // same transaction as the deletion, removed from file storage by the sales-anexo queue.
      await q(`CREATE TABLE arquivo_a_apagar (
        arquivo_id CHAR(36) ${ASCII} NOT NULL PRIMARY KEY,
        criado_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
      // The messaging gateway's last word on a phone: which gateway and number it talks through.
      await q(`CREATE TABLE contato_gateway (
        telefone_chave VARCHAR(40) ${ASCII} NOT NULL PRIMARY KEY,
        config_system_gateway_id CHAR(36) ${ASCII} NOT NULL,
        config_system_mensageiro_id CHAR(36) ${ASCII} NULL,
        atualizado_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  {
    name: '0003-sales-historico-apagado',
    async up(qi) {
      // a deleted record remembers the last chat message it held: that message and the earlier
      // ones belong to the deleted history, whatever event brings them again
      await qi.sequelize.query('ALTER TABLE conversa ADD COLUMN suporte_mensagem_apagada_ate BIGINT NULL');
    },
  },
  {
    name: '0004-sales-transferencia-adiada',
    async up(qi) {
      // a hand-over the chat platform refused waits before it is tried again, longer each time,
      // so conversations that always fail do not take every run's places; a new message of the
      // contact (after the last refusal) starts a new wait
      await qi.sequelize.query(
        `ALTER TABLE conversa ADD COLUMN transferencia_falhas INT NOT NULL DEFAULT 0,
          ADD COLUMN transferencia_falhou_em DATETIME(3) NULL, ADD COLUMN transferencia_tentar_apos DATETIME(3) NULL`,
      );
    },
  },
  {
    name: '0005-sales-segundos-e-telefones',
    async up(qi) {
      const q = (sql: string) => qi.sequelize.query(sql);
      // message times are kept in whole seconds: those stored before with milliseconds follow, so
      // they compare with the new ones (the last message's edit, the robot's answer)
      const segundos = (coluna: string) => `${coluna} = TIMESTAMP(DATE_FORMAT(${coluna}, '%Y-%m-%d %H:%i:%s'))`;
      await q(`UPDATE conversa_mensagem SET ${segundos('criada_em')} WHERE MICROSECOND(criada_em) <> 0`);
      await q(
        `UPDATE conversa SET ${['ultima_mensagem_em', 'ultima_mensagem_do_contato_em', 'ultima_mensagem_do_robo_em'].map(segundos).join(', ')}
          WHERE MICROSECOND(ultima_mensagem_em) <> 0 OR MICROSECOND(ultima_mensagem_do_contato_em) <> 0
             OR MICROSECOND(ultima_mensagem_do_robo_em) <> 0`,
      );
      // a mobile's key whose eight digits begin with 2 to 5 was kept without its ninth digit,
      // where a landline's is: such links are forgotten and learnt again from the gateway's next
      // message of the phone, under the right key
      await q(`DELETE FROM contato_gateway WHERE telefone_chave REGEXP '^55[0-9]{2}[2-5][0-9]{7}$'`);
    },
  },
  {
    name: '0006-sales-mensagem-apagada',
    async up(qi) {
      // a message deleted in the chat platform stays deleted: an edit or read receipt sent before
      // the deletion and arriving after it must not bring its text back. Appended last, the column
      // costs no table copy; messages deleted before it are not marked (their text is the
      // platform's notice, which nothing tells apart from a message that says the same)
      await qi.sequelize.query('ALTER TABLE conversa_mensagem ADD COLUMN apagada BOOLEAN NOT NULL DEFAULT 0');
    },
  },
  {
    name: '0007-sales-espera-por-sistema',
    async up(qi) {
      // the hand-over trigger takes each system's oldest waits apart (so one system's refused
      // backlog cannot take every place of a run): the index starts with the system
      await qi.sequelize.query(
        `ALTER TABLE conversa DROP INDEX conversa_espera,
          ADD KEY conversa_espera_do_sistema (config_system_suporte_id, status, deletado_em, ultima_mensagem_do_contato_em)`,
      );
    },
  },
  {
    name: '0008-sales-ordem-dos-eventos',
    async up(qi) {
      // the chat platform's `updated_at` of the copy of each conversation and message last applied:
      // webhooks come in no guaranteed order, and an older copy arriving late must not undo a newer
      // one. NULL (records before this, events without it) lets the next event apply, as before.
      // Appended last, the columns cost no table copy; run again after a stop midway, it adds what is missing
      await adicionarColuna(qi, 'conversa', 'suporte_atualizada_em', 'DATETIME(6) NULL');
      await adicionarColuna(qi, 'conversa_mensagem', 'suporte_atualizada_em', 'DATETIME(6) NULL');
    },
  },
  {
    name: '0009-sales-nomes-compostos',
    async up(qi) {
      // contact names are stored composed (NFC), as the contact search composes its text: one stored
      // decomposed before (a letter and its combining accent) would be found by no search. Only
      // names holding a combining mark are read, a page at a time by id
      for (let depois = ''; ; ) {
        const [linhas] = (await qi.sequelize.query(
          `SELECT id, contato_nome FROM conversa WHERE id > ? AND contato_nome REGEXP '\\\\p{M}' ORDER BY id LIMIT 1000`,
          { replacements: [depois] },
        )) as [{ id: string; contato_nome: string }[], unknown];
        if (!linhas.length) return;
        for (const l of linhas) {
          const composto = l.contato_nome.normalize('NFC');
          if (composto !== l.contato_nome) await qi.sequelize.query('UPDATE conversa SET contato_nome = ? WHERE id = ?', { replacements: [composto, l.id] });
        }
        depois = linhas[linhas.length - 1].id;
      }
    },
  },
  {
    name: '0010-sales-espera-pelo-relogio-do-suporte',
    async up(qi) {
      // a wait is told apart by the chat platform's times only: the hand-over and the refusals
      // record the contact's last message they were for, instead of being compared by our own
      // clock (transferida_em, transferencia_falhou_em) with the platform's. Earlier records keep
      // their decision: LEAST gives the message time when ours was later (that message was
      // covered), else our time, which stays before the message (a new wait)
      // run again after a stop between the two statements: the columns (added together) are there
      if (!(await existeNoEsquema(qi, 'conversa', { coluna: 'transferida_contato_em' }))) {
        await qi.sequelize.query(
          `ALTER TABLE conversa ADD COLUMN transferida_contato_em DATETIME(3) NULL, ADD COLUMN transferencia_falhou_contato_em DATETIME(3) NULL`,
        );
      }
      await qi.sequelize.query(
        `UPDATE conversa SET transferida_contato_em = LEAST(transferida_em, ultima_mensagem_do_contato_em),
            transferencia_falhou_contato_em = LEAST(transferencia_falhou_em, ultima_mensagem_do_contato_em)
          WHERE transferida_em IS NOT NULL OR transferencia_falhou_em IS NOT NULL`,
      );
    },
  },
  {
    name: '0011-sales-robo-escolhido',
    async up(qi) {
      // a robot linked or unlinked by PATCH is the team's choice: a later robot message of the
      // platform no longer links the conversation (0 follows the robot, as before). Appended last,
      // the column costs no table copy
      await adicionarColuna(qi, 'conversa', 'robo_escolhido', 'BOOLEAN NOT NULL DEFAULT 0');
    },
  },
  {
    name: '0012-sales-status-corrigido',
    async up(qi) {
      // the chat platform's `updated_at` of the conversation's copy a PATCH of the status corrected:
      // a copy not newer than it (a message event carries the conversation as it was) leaves the
      // team's status. NULL guards nothing: never corrected or, in rows written before a decision
      // with no platform time was marked by the database's clock (registro.ts MARCA_DA_DECISAO),
      // corrected before any time was known. Appended last, the column costs no table copy
      await adicionarColuna(qi, 'conversa', 'status_corrigido_sobre', 'DATETIME(6) NULL');
    },
  },
  {
    name: '0013-sales-anexo-adiada-desde',
    async up(qi) {
      // the cap on copies put off on our side counts from the first put-off of the copy, by the
      // database's clock, instead of from the attachment's record, which left older attachments
      // (re-armed by hand, copied again) unprotected. A copy put off before this starts its count at
      // its next put-off. Appended last, the column costs no table copy
      await adicionarColuna(qi, 'anexo_da_mensagem', 'adiada_desde', 'DATETIME(3) NULL');
    },
  },
  {
    name: '0014-sales-identidade-do-robo',
    async up(qi) {
      // a chat identity (a user, an agent bot: counted apart) answers for one live robot, so a
      // message of it links that robot and no other; a deleted robot's is free (the generated keys
      // are NULL once deleted, as conversa's). Where live robots shared one, the robot created first
      // keeps it and the later ones lose it, each logged so the team can set it again where meant.
      // Run again after a stop, nothing is left to clear and the keys are there
      for (const campo of ['suporte_usuario_id', 'suporte_bot_id']) {
        const [linhas] = (await qi.sequelize.query(
          `SELECT id, nome, ${campo} AS identidade FROM robo
            WHERE deletado_em IS NULL AND ${campo} IN (SELECT ${campo} FROM robo WHERE deletado_em IS NULL GROUP BY ${campo} HAVING COUNT(*) > 1)
            ORDER BY ${campo}, criado_em, id`,
        )) as [{ id: string; nome: string; identidade: string | number }[], unknown];
        const primeiros = new Map<string, string>();
        const retirados: string[] = [];
        for (const l of linhas) {
          const identidade = String(l.identidade);
          const mantido = primeiros.get(identidade);
          if (!mantido) {
            primeiros.set(identidade, l.id);
            continue;
          }
          retirados.push(l.id);
          logger('migracoes').warn(
            { robo_id: l.id, robo_nome: l.nome, campo, identidade, mantida_pelo_robo_id: mantido },
            'identidade do suporte repetida: retirada do robô cadastrado depois',
          );
        }
        if (retirados.length) {
          await qi.sequelize.query(`UPDATE robo SET ${campo} = NULL, atualizado_em = ${AGORA_NO_BANCO} WHERE id IN (?)`, { replacements: [retirados] });
        }
      }
      // the plain keys go: nothing reads a robot by its identity (the webhooks load them all)
      if (!(await existeNoEsquema(qi, 'robo', { coluna: 'suporte_usuario_vivo' }))) {
        await qi.sequelize.query(
          `ALTER TABLE robo DROP INDEX robo_suporte_usuario, DROP INDEX robo_suporte_bot,
            ADD COLUMN suporte_usuario_vivo BIGINT GENERATED ALWAYS AS (IF(deletado_em IS NULL, suporte_usuario_id, NULL)) STORED,
            ADD COLUMN suporte_bot_vivo BIGINT GENERATED ALWAYS AS (IF(deletado_em IS NULL, suporte_bot_id, NULL)) STORED,
            ADD UNIQUE KEY robo_suporte_usuario_vivo (suporte_usuario_vivo),
            ADD UNIQUE KEY robo_suporte_bot_vivo (suporte_bot_vivo)`,
        );
      }
    },
  },
  {
    name: '0015-sales-contato-sem-acentos',
    async up(qi) {
      // the contact searches ignore accents as well as case (`joao` finds `João`): the name in
      // `contato_busca` is stored with its accented letters plain, as the searched text is. The
      // table is copied once, its two search indexes built again
      await qi.sequelize.query(
        `ALTER TABLE conversa MODIFY contato_busca VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
          GENERATED ALWAYS AS (CONCAT(${semAcentos('LOWER(contato_nome)')}, '\\n', contato_telefone_digitos)) STORED`,
      );
    },
  },
  {
    name: '0016-sales-anexo-parada',
    async up(qi) {
      // a copy stopped for good before its attempts were spent (file storage refusing the attachment
      // as past its size limit) is marked so, and `tentativas` keeps counting the attempts made
      // (DESIGN §7) instead of being set to the maximum to stop it. Copies stopped so before keep
      // the 6 they were given, which stops them all the same. Appended last, the column costs no
      // table copy
      await adicionarColuna(qi, 'anexo_da_mensagem', 'parada', 'BOOLEAN NOT NULL DEFAULT 0');
    },
  },
  {
    name: '0017-sales-anexo-ultima-tentativa',
    async up(qi) {
      // when the copy's last counted attempt began, by the database's clock: a job the queue brings
      // back at once (a worker's crash, the sweep) waits what is left of the retry interval since
      // then. Copies tried before it have none and run as before. Appended last, the column costs
      // no table copy
      await adicionarColuna(qi, 'anexo_da_mensagem', 'ultima_tentativa_em', 'DATETIME(3) NULL');
    },
  },
  {
    name: '0018-sales-chave-a-apagar',
    async up(qi) {
      // Idempotency-Keys of copies file storage may hold with no id known here (an upload stored
      // whose answer was lost) and that no attempt will come to claim: the attachment deleted, or
      // its copy given up. The removal asks file storage for each key's file and lists it in
      // arquivo_a_apagar. Run again after a stop, the table is there
      await qi.sequelize.query(`CREATE TABLE IF NOT EXISTS chave_a_apagar (
        chave VARCHAR(255) ${ASCII} NOT NULL PRIMARY KEY,
        criado_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  {
    name: '0019-sales-contato-sem-controles',
    async up(qi) {
      // contact names are stored with their control characters as spaces (suporte.ts): a line
      // break in one split `contato_busca` in two, so its name was not found whole and the digits
      // searched were looked for in its second half. The names stored before are cleaned once; run
      // again, it finds none
      await qi.sequelize.query(`UPDATE conversa SET contato_nome = REGEXP_REPLACE(contato_nome, '\\\\p{Cc}', ' ') WHERE contato_nome REGEXP '\\\\p{Cc}'`);
    },
  },
  {
    name: '0020-sales-contato-gateway-mensagem-em',
    async up(qi) {
      // when the message whose gateway event wrote a phone's link was sent: two instances (two
      // numbers) send their events apart, and an older message's event arriving after a newer one's
      // moved the phone back to the number the contact had left. Links kept before have none and
      // take the next event, as before. Appended last, the column costs no table copy
      await adicionarColuna(qi, 'contato_gateway', 'mensagem_em', 'DATETIME(3) NULL');
    },
  },
  {
    name: '0021-sales-tempos-adiantados',
    async up(qi) {
      // A platform time more than ten minutes ahead of the clock now counts as no time where it
      // orders events, and as ten minutes ahead where it dates a message (api/sales/tempos.ts).
      // Stored before, each held every later event of its conversation, message or phone out for
      // good, or kept a message its conversation's last, and its hand-over marks past every later
      // one. Those are brought to the same rule, a conversation's marks in one statement that
      // keeps the order the hand-over reads (the robot's answer, or a hand-over, before the
      // contact's last message stays before it, a second earlier); a status the team corrected
      // stays corrected against the copies stamped up to now. Each statement reads committed
      // rows, locking only those it changes (webhooks keep running beside it); run again, it finds
      // none.
      const agora = Date.now();
      // (the ten minutes of ADIANTAMENTO_ACEITO_MS as this was written; messages keep whole seconds)
      const limite = Math.floor((agora + 10 * 60_000) / 1000) * 1000;
      const [L, antesDoLimite] = [dataSql(new Date(limite)), dataSql(new Date(limite - 1000))];
      const contato = 'ultima_mensagem_do_contato_em';
      // a mark at or after the contact's last message stays so, one before it stays before it
      const comoOContato = (coluna: string) =>
        `${coluna} = IF(${contato} > :L AND ${coluna} >= :L AND ${coluna} < ${contato}, :antes, LEAST(${coluna}, :L))`;
      // a refused hand-over's mark is the start of the wait it refused, after the robot's last
      // answer and the last hand-over: of the current wait (now starting at :L), or of one before
      const falhou = 'transferencia_falhou_contato_em';
      const comoAEspera = `${falhou} = IF(${falhou} > :L, IF(${falhou} > GREATEST(COALESCE(ultima_mensagem_do_robo_em, '1000-01-01'),
        COALESCE(transferida_contato_em, '1000-01-01')), :L, :antes), ${falhou})`;
      const marcas = ['ultima_mensagem_em', contato, 'ultima_mensagem_do_robo_em', 'transferida_contato_em', 'transferencia_falhou_contato_em'];
      const comandos: [string, Record<string, string>][] = [
        [
          // assigned left to right: each reads the marks after it as they were
          `UPDATE conversa SET ${comoAEspera}, ${comoOContato('ultima_mensagem_do_robo_em')}, ${comoOContato('transferida_contato_em')},
             ${contato} = LEAST(${contato}, :L),
             ultima_mensagem_em = LEAST(ultima_mensagem_em, :L), suporte_atualizada_em = IF(suporte_atualizada_em > :L, NULL, suporte_atualizada_em),
             status_corrigido_sobre = IF(status_corrigido_sobre > :L, :agora, status_corrigido_sobre)
            WHERE ${[...marcas, 'suporte_atualizada_em', 'status_corrigido_sobre'].map((m) => `${m} > :L`).join(' OR ')}`,
          { agora: dataSql(new Date(agora)) },
        ],
        ['UPDATE conversa_mensagem SET suporte_atualizada_em = NULL WHERE suporte_atualizada_em > :L', {}],
        ['UPDATE conversa_mensagem SET criada_em = :L WHERE criada_em > :L', {}],
        ['UPDATE contato_gateway SET mensagem_em = NULL WHERE mensagem_em > :L', {}],
      ];
      for (const [sql, valores] of comandos) {
        await qi.sequelize.transaction(LEITURA_CONFIRMADA, (transaction) =>
          qi.sequelize.query(sql, { replacements: { L, antes: antesDoLimite, ...valores }, transaction }),
        );
      }
    },
  },
  {
    name: '0022-sales-remocoes-por-idade',
    async up(qi) {
      // the removals read their lists oldest first, a page at a time (api/sales/anexos.ts): by
      // these indexes each page is read in order, where a backlog (file storage away for hours)
      // was sorted whole on every pass. Each statement's index means it ran
      for (const tabela of ['arquivo_a_apagar', 'chave_a_apagar']) {
        const indice = `${tabela}_por_idade`;
        if (await existeNoEsquema(qi, tabela, { indice })) continue;
        await qi.sequelize.query(`CREATE INDEX ${indice} ON ${tabela} (criado_em)`);
      }
    },
  },
  migracaoDosNomesDePerfil,
  migracaoDoSegredoDosTokens,
  {
    name: '0023-sales-espera-sem-resposta',
    async up(qi) {
      // The hand-over reads, every minute, the pending conversations of a system oldest wait first
      // (api/sales/transferencia.ts). By the contact's last message alone, those the robot answered
      // last, pending for good, came first in the index and were read on every run before the first
      // real wait. `espera_do_contato_em` is that time only while the contact waits unanswered and
      // not handed over (SEM_RESPOSTA), NULL otherwise, so the index holds the waits alone at its end
      await adicionarColuna(
        qi,
        'conversa',
        'espera_do_contato_em',
        `DATETIME(3) AS (IF(ultima_mensagem_do_contato_em IS NOT NULL
          AND (ultima_mensagem_do_robo_em IS NULL OR ultima_mensagem_do_robo_em < ultima_mensagem_do_contato_em)
          AND (transferida_contato_em IS NULL OR transferida_contato_em < ultima_mensagem_do_contato_em),
          ultima_mensagem_do_contato_em, NULL)) VIRTUAL`,
      );
      if (await existeNoEsquema(qi, 'conversa', { indice: 'conversa_espera_do_sistema' })) {
        await qi.sequelize.query(
          `ALTER TABLE conversa DROP INDEX conversa_espera_do_sistema,
            ADD KEY conversa_sem_resposta (config_system_suporte_id, status, deletado_em, espera_do_contato_em)`,
        );
      }
    },
  },
];
