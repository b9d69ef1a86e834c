import { randomUUID } from 'node:crypto';
import { migrar } from '../../lib/database';
import { MIGRACOES_HUB } from '../../models/hub/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0009 turns the hub's ids (and `situacao`) to ASCII on a database already in use: the
 * rows and the foreign keys stay, and ids still compare without regard to case, as before. Run
 * again after a stop midway, it finishes the work. Migration 0010 writes in lower case the ids a
 * client had sent in capitals.
 */
const banco = bancoAntesDaMigracao('hub', MIGRACOES_HUB, '0009-hub-ids-ascii');
const { q, indice: ATE_A_0009 } = banco;

afterAll(() => banco.apagar());

test('rows and foreign keys survive the change; ids still compare without regard to case', async () => {
  await banco.abrir();
  const [app, tipo, assinatura, evento, entrega] = Array.from({ length: 5 }, () => randomUUID());
  await q("INSERT INTO aplicativo (id, identificador_no_auth, nome, criado_em, atualizado_em) VALUES (?, ?, 'App', NOW(3), NOW(3))", [app, randomUUID()]);
  await q("INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, 'x.criado', ?, NOW(3), NOW(3))", [tipo, app]);
  await q("INSERT INTO versao_de_evento (tipo_de_evento_id, versao, esquema, criada_em, atualizada_em) VALUES (?, 1, '{}', NOW(3), NOW(3))", [tipo]);
  await q(
    `INSERT INTO assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, criada_em, atualizada_em)
      VALUES (?, ?, ?, 1, 'https://a.test/w', NOW(3), NOW(3))`,
    [assinatura, app, tipo],
  );
  await q("INSERT INTO evento (id, aplicativo_origem_id, tipo_de_evento_id, versao, dados, lote, criado_em) VALUES (?, ?, ?, 1, '{}', 'lote-1', NOW(3))", [evento, app, tipo]);
  await q("INSERT INTO entrega (id, evento_id, assinatura_id, situacao, criada_em, atualizada_em) VALUES (?, ?, ?, 'fila_de_erro', NOW(3), NOW(3))", [entrega, evento, assinatura]);
  await q('INSERT INTO tentativa_de_entrega (entrega_id, numero, iniciada_em, duracao_ms) VALUES (?, 1, NOW(3), 5)', [entrega]);

  // a first run stopped midway: one foreign key already dropped, one table already changed
  await q('ALTER TABLE assinatura DROP FOREIGN KEY assinatura_tipo');
  await q('ALTER TABLE tentativa_de_entrega MODIFY entrega_id CHAR(36) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL');
  expect(await migrar('hub', MIGRACOES_HUB.slice(0, ATE_A_0009 + 1))).toEqual(['0009-hub-ids-ascii']);

  const colunas = await q(
    `SELECT CONCAT(table_name, '.', column_name) AS coluna, collation_name AS colacao FROM information_schema.columns
      WHERE table_schema = DATABASE() AND (column_name = 'id' OR column_name LIKE '%\\_id' OR column_name IN ('situacao', 'lote', 'identificador_no_auth'))
        AND table_name IN ('aplicativo', 'tipo_de_evento', 'versao_de_evento', 'assinatura', 'evento', 'entrega', 'tentativa_de_entrega')
        AND data_type IN ('char', 'varchar')`,
  );
  expect(colunas.length).toBe(18);
  for (const c of colunas) expect(c).toMatchObject({ colacao: 'ascii_general_ci' });
  const chaves = await q("SELECT constraint_name AS nome FROM information_schema.referential_constraints WHERE constraint_schema = DATABASE() AND table_name <> 'colaborador' ORDER BY 1");
  expect(chaves.map((c) => c.nome)).toEqual(['assinatura_aplicativo', 'assinatura_tipo', 'tipo_de_evento_aplicativo', 'versao_de_evento_tipo']);
  await expect(
    q("INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, 'y.criado', ?, NOW(3), NOW(3))", [randomUUID(), randomUUID()]),
  ).rejects.toMatchObject({ code: 'ER_NO_REFERENCED_ROW_2' });

  const [linha] = await q(
    `SELECT e.situacao, t.numero, ev.lote FROM entrega e JOIN evento ev ON ev.id = e.evento_id
       JOIN tentativa_de_entrega t ON t.entrega_id = e.id WHERE e.id = ?`,
    [entrega.toUpperCase()],
  );
  expect(linha).toEqual({ situacao: 'fila_de_erro', numero: 1, lote: 'lote-1' });
});

test('ids stored in capitals are written in lower case, and their rows still join', async () => {
  const [app, tipo, assinatura] = Array.from({ length: 3 }, () => randomUUID());
  await q("INSERT INTO aplicativo (id, identificador_no_auth, nome, criado_em, atualizado_em) VALUES (?, ?, 'App', NOW(3), NOW(3))", [app, randomUUID()]);
  await q("INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, 'z.criado', ?, NOW(3), NOW(3))", [tipo, app.toUpperCase()]);
  await q("INSERT INTO versao_de_evento (tipo_de_evento_id, versao, esquema, criada_em, atualizada_em) VALUES (?, 1, '{}', NOW(3), NOW(3))", [tipo.toUpperCase()]);
  await q(
    `INSERT INTO assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, criada_em, atualizada_em)
      VALUES (?, ?, ?, 1, 'https://a.test/w', NOW(3), NOW(3))`,
    [assinatura, app.toUpperCase(), tipo.toUpperCase()],
  );
  expect(await migrar('hub', MIGRACOES_HUB.slice(0, ATE_A_0009 + 2))).toEqual(['0010-hub-ids-minusculos']);
  const [linha] = await q(
    `SELECT t.aplicativo_id AS dono, v.tipo_de_evento_id AS tipo_da_versao, a.tipo_de_evento_id AS tipo_assinado, a.aplicativo_assinante_id AS assinante
       FROM tipo_de_evento t JOIN versao_de_evento v ON v.tipo_de_evento_id = t.id JOIN assinatura a ON a.tipo_de_evento_id = t.id WHERE t.id = ?`,
    [tipo],
  );
  expect(linha).toEqual({ dono: app, tipo_da_versao: tipo, tipo_assinado: tipo, assinante: app });
});
