import { QueryTypes } from 'sequelize';
import { LEITURA_CONFIRMADA, Migracao } from '../../lib/database';
import { criarContagemComDeltas, registrarDelta } from '../shared/contagem';
import { migracaoDeAcesso, migracaoDoSegredoDosTokens, migracaoDosNomesDePerfil } from '../shared/migracoes-de-acesso';
import { adicionarColuna, ID_ASCII, TABELA } from '../shared/sql';

export const MIGRACOES_HUB: Migracao[] = [
  migracaoDeAcesso,
  {
    name: '0002-hub',
    async up(qi) {
      const q = (sql: string) => qi.sequelize.query(sql);
      await q(`CREATE TABLE aplicativo (
        id CHAR(36) NOT NULL PRIMARY KEY,
        identificador_no_auth VARCHAR(64) NOT NULL,
        nome VARCHAR(200) NOT NULL,
        descricao VARCHAR(1000) NULL,
        ativo BOOLEAN NOT NULL DEFAULT TRUE,
        criado_em DATETIME(3) NOT NULL,
        atualizado_em DATETIME(3) NOT NULL,
        deletado_em DATETIME(3) NULL,
        UNIQUE KEY aplicativo_identificador_no_auth (identificador_no_auth),
        KEY aplicativo_nome (deletado_em, nome, id)
      ) ${TABELA}`);
      await q(`CREATE TABLE tipo_de_evento (
        id CHAR(36) NOT NULL PRIMARY KEY,
        nome VARCHAR(150) NOT NULL,
        descricao VARCHAR(1000) NULL,
        aplicativo_id CHAR(36) NOT NULL,
        criado_em DATETIME(3) NOT NULL,
        atualizado_em DATETIME(3) NOT NULL,
        deletado_em DATETIME(3) NULL,
        nome_unico VARCHAR(150) GENERATED ALWAYS AS (IF(deletado_em IS NULL, nome, NULL)) STORED,
        UNIQUE KEY tipo_de_evento_nome_unico (nome_unico),
        KEY tipo_de_evento_aplicativo (aplicativo_id),
        CONSTRAINT tipo_de_evento_aplicativo FOREIGN KEY (aplicativo_id) REFERENCES aplicativo (id)
      ) ${TABELA}`);
      await q(`CREATE TABLE versao_de_evento (
        tipo_de_evento_id CHAR(36) NOT NULL,
        versao INT NOT NULL,
        esquema LONGTEXT NOT NULL,
        situacao VARCHAR(20) NOT NULL DEFAULT 'ativa',
        criada_em DATETIME(3) NOT NULL,
        atualizada_em DATETIME(3) NOT NULL,
        PRIMARY KEY (tipo_de_evento_id, versao),
        CONSTRAINT versao_de_evento_tipo FOREIGN KEY (tipo_de_evento_id) REFERENCES tipo_de_evento (id)
      ) ${TABELA}`);
      // one live subscription per application and type; a deleted one frees the pair (SPEC §3)
      await q(`CREATE TABLE assinatura (
        id CHAR(36) NOT NULL PRIMARY KEY,
        aplicativo_assinante_id CHAR(36) NOT NULL,
        tipo_de_evento_id CHAR(36) NOT NULL,
        versao_do_esquema INT NOT NULL,
        url_de_destino VARCHAR(500) NOT NULL,
        maximo_de_tentativas INT NOT NULL DEFAULT 5,
        tempo_limite_em_segundos INT NOT NULL DEFAULT 5,
        ativa BOOLEAN NOT NULL DEFAULT TRUE,
        ultima_entrega_em DATETIME(3) NULL,
        criada_em DATETIME(3) NOT NULL,
        atualizada_em DATETIME(3) NOT NULL,
        deletada_em DATETIME(3) NULL,
        viva TINYINT GENERATED ALWAYS AS (IF(deletada_em IS NULL, 1, NULL)) STORED,
        UNIQUE KEY assinatura_par_unico (aplicativo_assinante_id, tipo_de_evento_id, viva),
        KEY assinatura_tipo (tipo_de_evento_id, versao_do_esquema, ativa),
        CONSTRAINT assinatura_aplicativo FOREIGN KEY (aplicativo_assinante_id) REFERENCES aplicativo (id),
        CONSTRAINT assinatura_tipo FOREIGN KEY (tipo_de_evento_id) REFERENCES tipo_de_evento (id)
      ) ${TABELA}`);
      await q(`CREATE TABLE evento (
        id CHAR(36) NOT NULL PRIMARY KEY,
        aplicativo_origem_id CHAR(36) NOT NULL,
        id_do_publicador VARCHAR(100) NULL,
        tipo_de_evento_id CHAR(36) NOT NULL,
        versao INT NOT NULL,
        dados LONGTEXT NOT NULL,
        entregas INT NOT NULL DEFAULT 0,
        criado_em DATETIME(3) NOT NULL,
        UNIQUE KEY evento_idempotencia (aplicativo_origem_id, id_do_publicador),
        KEY evento_criado_em (criado_em)
      ) ${TABELA}`);
      await q(`CREATE TABLE entrega (
        id CHAR(36) NOT NULL PRIMARY KEY,
        evento_id CHAR(36) NOT NULL,
        assinatura_id CHAR(36) NOT NULL,
        situacao VARCHAR(20) NOT NULL DEFAULT 'pendente',
        tentativas INT NOT NULL DEFAULT 0,
        proxima_tentativa_em DATETIME(3) NULL,
        entregue_em DATETIME(3) NULL,
        ultimo_erro VARCHAR(1000) NULL,
        criada_em DATETIME(3) NOT NULL,
        atualizada_em DATETIME(3) NOT NULL,
        KEY entrega_assinatura (assinatura_id, situacao, criada_em),
        KEY entrega_situacao (situacao, criada_em),
        KEY entrega_criada_em (criada_em)
      ) ${TABELA}`);
      await q(`CREATE TABLE tentativa_de_entrega (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        entrega_id CHAR(36) NOT NULL,
        numero INT NOT NULL,
        iniciada_em DATETIME(3) NOT NULL,
        duracao_ms INT NOT NULL,
        status_http INT NULL,
        erro VARCHAR(1000) NULL,
        resposta VARCHAR(1024) NULL,
        KEY tentativa_entrega (entrega_id, numero)
      ) ${TABELA}`);
      await q(`CREATE TABLE chave_do_hub (
        kid VARCHAR(64) NOT NULL PRIMARY KEY,
        chave_privada_pem TEXT NOT NULL,
        assina_desde DATETIME(3) NOT NULL,
        aposentada_em DATETIME(3) NULL,
        criada_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  {
    name: '0003-hub-ultima-entrega',
    async up(qi) {
      // the last successful delivery of a subscription is read as MAX(entregue_em)
      await qi.sequelize.query('CREATE INDEX entrega_ultima ON entrega (assinatura_id, situacao, entregue_em)');
    },
  },
  {
    name: '0004-hub-idempotencia-exata',
    async up(qi) {
      // a publisher's id is compared byte for byte: under the table's collation "Ab1" and "aB1"
      // (or "é" and "e") were one key, and the second event was answered as a repeat of the first
      await qi.sequelize.query('ALTER TABLE evento MODIFY id_do_publicador VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL');
    },
  },
  {
    name: '0005-hub-entregas-do-evento',
    async up(qi) {
      // an event's deliveries are read by a repeated publication (those still to queue) and by the
      // retention (is any left?): without this, each read walked every delivery of the table
      await qi.sequelize.query('CREATE INDEX entrega_evento ON entrega (evento_id)');
    },
  },
  {
    name: '0006-hub-entregas-atrasadas',
    async up(qi) {
      // the minute's sweep reads the pending deliveries over two minutes late: without this it
      // walked every pending one (a subscriber down for hours leaves hundreds of thousands)
      await qi.sequelize.query('CREATE INDEX entrega_atrasada ON entrega (situacao, proxima_tentativa_em)');
    },
  },
  {
    name: '0007-hub-lote-do-evento',
    async up(qi) {
      // the job of the batch that carries the event's first attempts: a repeated publication adds
      // it again under the same id (a no-op while it is queued), and the sweep leaves its
      // deliveries to it while it exists (docs/decisoes.md)
      await qi.sequelize.query('ALTER TABLE evento ADD COLUMN lote VARCHAR(50) NULL');
    },
  },
  {
    name: '0008-hub-eventos-do-lote',
    async up(qi) {
      // a repeated publication queues its batch again with the untried deliveries of all its events
      await qi.sequelize.query('CREATE INDEX evento_lote ON evento (lote)');
    },
  },
  {
    name: '0009-hub-ids-ascii',
    async up(qi) {
      // Every publication writes a delivery row per subscription into seven indexes, four of them
      // keyed by UUIDs that a Unicode collation compared character by character: in ASCII the
      // database spends about 40% less per delivery row. Rebuilds each table (a copy), so on a
      // large history it takes a while, writes waiting. A foreign key's two sides must change
      // together, which the database allows only with the key dropped meanwhile.
      const q = (sql: string) => qi.sequelize.query(sql);
      const id = (coluna: string) => `MODIFY ${coluna} CHAR(36) ${ID_ASCII} NOT NULL`;
      const chaves = [
        ['tipo_de_evento', 'tipo_de_evento_aplicativo', 'aplicativo_id', 'aplicativo'],
        ['versao_de_evento', 'versao_de_evento_tipo', 'tipo_de_evento_id', 'tipo_de_evento'],
        ['assinatura', 'assinatura_aplicativo', 'aplicativo_assinante_id', 'aplicativo'],
        ['assinatura', 'assinatura_tipo', 'tipo_de_evento_id', 'tipo_de_evento'],
      ];
      // run again after a stop midway, it drops only the keys still there and adds only those missing
      const existentes = async () =>
        new Set(
          ((await qi.sequelize.query(
            'SELECT constraint_name AS nome FROM information_schema.referential_constraints WHERE constraint_schema = DATABASE()',
          )) as [{ nome: string }[], unknown])[0].map((c) => c.nome),
        );
      const antes = await existentes();
      for (const [tabela, nome] of chaves) if (antes.has(nome)) await q(`ALTER TABLE ${tabela} DROP FOREIGN KEY ${nome}`);
      await q(`ALTER TABLE aplicativo ${id('id')}, MODIFY identificador_no_auth VARCHAR(64) ${ID_ASCII} NOT NULL`);
      await q(`ALTER TABLE tipo_de_evento ${id('id')}, ${id('aplicativo_id')}`);
      await q(`ALTER TABLE versao_de_evento ${id('tipo_de_evento_id')}, MODIFY situacao VARCHAR(20) ${ID_ASCII} NOT NULL DEFAULT 'ativa'`);
      await q(`ALTER TABLE assinatura ${id('id')}, ${id('aplicativo_assinante_id')}, ${id('tipo_de_evento_id')}`);
      await q(`ALTER TABLE evento ${id('id')}, ${id('aplicativo_origem_id')}, ${id('tipo_de_evento_id')}, MODIFY lote VARCHAR(50) ${ID_ASCII} NULL`);
      await q(`ALTER TABLE entrega ${id('id')}, ${id('evento_id')}, ${id('assinatura_id')}, MODIFY situacao VARCHAR(20) ${ID_ASCII} NOT NULL DEFAULT 'pendente'`);
      await q(`ALTER TABLE tentativa_de_entrega ${id('entrega_id')}`);
      const depois = await existentes();
      for (const [tabela, nome, coluna, alvo] of chaves) {
        if (!depois.has(nome)) await q(`ALTER TABLE ${tabela} ADD CONSTRAINT ${nome} FOREIGN KEY (${coluna}) REFERENCES ${alvo} (id)`);
      }
    },
  },
  {
    name: '0010-hub-ids-minusculos',
    async up(qi) {
      // ids a client wrote in capitals were stored so by the creation of types, versions and
      // subscriptions; the database matched them, the hub's own comparisons did not. Few rows, read by key.
      for (const [tabela, coluna] of [
        ['tipo_de_evento', 'aplicativo_id'],
        ['versao_de_evento', 'tipo_de_evento_id'],
        ['assinatura', 'tipo_de_evento_id'],
        ['assinatura', 'aplicativo_assinante_id'],
      ]) {
        await qi.sequelize.query(`UPDATE ${tabela} SET ${coluna} = LOWER(${coluna}) WHERE BINARY ${coluna} <> BINARY LOWER(${coluna})`);
      }
    },
  },
  {
    name: '0011-hub-pendentes-de-inativos',
    async up(qi) {
      // an application made inactive before its sync cancelled its subscriptions' pending
      // deliveries left them pending, each cancelled only when its next attempt came (hours, on a
      // long back-off): they are cancelled now as that sync does (api/hub/entregas.ts
      // cancelarPendentes), each application under its row's lock, as the sync holds it, so one
      // made active again meanwhile keeps its deliveries. Run again, it finds none pending.
      const s = qi.sequelize;
      const inativos = await s.query<{ id: string }>('SELECT id FROM aplicativo WHERE ativo = 0', { type: QueryTypes.SELECT });
      for (const { id } of inativos) {
        await s.transaction(LEITURA_CONFIRMADA, async (transaction) => {
          const [a] = await s.query<{ ativo: number }>('SELECT ativo FROM aplicativo WHERE id = ? FOR UPDATE', {
            replacements: [id],
            transaction,
            type: QueryTypes.SELECT,
          });
          if (!a || a.ativo) return;
          const assinaturas = await s.query<{ id: string }>('SELECT id FROM assinatura WHERE aplicativo_assinante_id = ?', {
            replacements: [id],
            transaction,
            type: QueryTypes.SELECT,
          });
          for (const assinatura of assinaturas) {
            await s.query("UPDATE entrega SET situacao = 'cancelada', proxima_tentativa_em = NULL, atualizada_em = ? WHERE assinatura_id = ? AND situacao = 'pendente'", {
              replacements: [new Date(), assinatura.id],
              transaction,
            });
          }
        });
      }
    },
  },
  {
    name: '0012-hub-tipo-do-evento',
    async up(qi) {
      // the type's name the event was published under: every attempt of it (retries, replays)
      // carries that one, not the name of the day, which a rename of the type since would have put
      // into a replay although its publisher never used it. Events already stored get their type's
      // current name, the best known. NULL stays only on events a process of the earlier version
      // stores meanwhile: they go out under the type's current name, as before (api/hub/entregas.ts).
      // Appended last, the column costs no table copy; the names are filled a page of ids at a
      // time, so no publication or purge waits behind one long statement. Run again, it fills only
      // what is still empty
      const s = qi.sequelize;
      await adicionarColuna(qi, 'evento', 'tipo', 'VARCHAR(150) NULL');
      let depois = '';
      for (;;) {
        const pagina = await s.query<{ id: string }>('SELECT id FROM evento WHERE id > ? ORDER BY id LIMIT 5000', {
          replacements: [depois],
          type: QueryTypes.SELECT,
        });
        if (!pagina.length) return;
        await s.query(
          'UPDATE evento ev JOIN tipo_de_evento t ON t.id = ev.tipo_de_evento_id SET ev.tipo = t.nome WHERE ev.id IN (?) AND ev.tipo IS NULL',
          { replacements: [pagina.map((e) => e.id)] },
        );
        depois = pagina[pagina.length - 1].id;
      }
    },
  },
  {
    name: '0013-hub-segredo',
    async up(qi) {
      // LOCALHOST's key that encrypts the signing keys (HUB_CHAVE_DE_CIFRA elsewhere); the keys
      // stored in clear before are encrypted as the hub next loads them (api/hub/assinador.ts)
      await qi.sequelize.query(`CREATE TABLE segredo (
        nome VARCHAR(64) NOT NULL PRIMARY KEY,
        valor VARCHAR(200) NOT NULL,
        criado_em DATETIME(3) NOT NULL
      ) ${TABELA}`);
    },
  },
  {
    name: '0014-hub-chave-revogada',
    async up(qi) {
      // `revoke-hub-key`: a key that leaked, neither signing nor listed from then on
      await adicionarColuna(qi, 'chave_do_hub', 'revogada_em', 'DATETIME(3) NULL');
    },
  },
  migracaoDosNomesDePerfil,
  migracaoDoSegredoDosTokens,
  {
    name: '0015-hub-fila-de-erro-contada',
    async up(qi) {
      // Each subscription's `entregas_na_fila_de_erro` was counted on every read: with a million
      // deliveries in a subscription's error queue, each listing took most of a second. The triggers
      // log each delivery entering or leaving the error queue as a delta; the hub-contagem job folds
      // the deltas into the base counts (lib/contagem.ts). Deliveries are always stored `pendente`
      // (api/hub/eventos.ts), so an insertion needs no trigger, and the publications' insertions,
      // the hub's busiest statement, pay nothing.
      const c = { base: 'fila_de_erro_contagem', deltas: 'fila_de_erro_contagem_delta', chave: 'assinatura_id' };
      await criarContagemComDeltas(qi.sequelize, c, {
        tipoDaChave: `CHAR(36) ${ID_ASCII}`,
        gatilhos: {
          fila_de_erro_alteracao: `AFTER UPDATE ON entrega FOR EACH ROW
            BEGIN
              IF (OLD.situacao = 'fila_de_erro') <> (NEW.situacao = 'fila_de_erro') THEN
                ${registrarDelta(c, 'NEW', "IF(NEW.situacao = 'fila_de_erro', 1, -1)")};
              END IF;
            END`,
          fila_de_erro_remocao: `AFTER DELETE ON entrega FOR EACH ROW
            BEGIN IF OLD.situacao = 'fila_de_erro' THEN ${registrarDelta(c, 'OLD', '-1')}; END IF; END`,
        },
        // per subscription, each count a range of entrega_assinatura holding its error queue alone:
        // grouped, the count would scan the whole history's index
        contagens: `SELECT a.id AS chave, (SELECT COUNT(*) FROM entrega e WHERE e.assinatura_id = a.id AND e.situacao = 'fila_de_erro') AS total
          FROM assinatura a`,
      });
    },
  },
];
