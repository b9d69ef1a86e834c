import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_FILES } from '../../models/files/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Files migration 0005 makes deletion logical (DESIGN §4) on a database in use: its files stay, all
 * live, and an application's live files are read from the index that holds them apart. Run again,
 * it changes nothing.
 */
const banco = bancoAntesDaMigracao('files', MIGRACOES_FILES, '0005-files-exclusao-logica');
const { q, indice } = banco;

afterAll(() => banco.apagar());

const colunasDoIndice = async () =>
  (
    await q(
      `SELECT column_name AS coluna FROM information_schema.statistics
        WHERE table_schema = DATABASE() AND table_name = 'arquivo' AND index_name = 'arquivo_aplicativo' ORDER BY seq_in_index`,
    )
  ).map((l) => l.coluna.toLowerCase());

test('files stored before it stay, live; the listing index holds the deleted apart; run again, nothing changes', async () => {
  await banco.abrir();
  const ids = [randomUUID(), randomUUID()];
  for (const [i, id] of ids.entries()) {
    await q(
      `INSERT INTO arquivo (id, aplicativo_id, nome, tipo_mime, tamanho, sha256, criado_em, chave_de_idempotencia)
       VALUES (?, 'app-1', ?, 'text/plain', 3, ?, UTC_TIMESTAMP(3), ?)`,
      [id, `antes-${i}.txt`, 'a'.repeat(64), i ? null : 'chave-1'],
    );
  }
  expect(await colunasDoIndice()).toEqual(['aplicativo_id', 'criado_em', 'id']);

  expect(await migrar('files', MIGRACOES_FILES.slice(0, indice + 1))).toEqual(['0005-files-exclusao-logica']);
  expect(await q('SELECT id, nome, chave_de_idempotencia, deletado_em FROM arquivo ORDER BY nome')).toEqual([
    { id: ids[0], nome: 'antes-0.txt', chave_de_idempotencia: 'chave-1', deletado_em: null },
    { id: ids[1], nome: 'antes-1.txt', chave_de_idempotencia: null, deletado_em: null },
  ]);
  expect(await colunasDoIndice()).toEqual(['aplicativo_id', 'deletado_em', 'criado_em', 'id']);

  await MIGRACOES_FILES[indice].up(bancoDoServico('files').getQueryInterface());
  expect(await colunasDoIndice()).toEqual(['aplicativo_id', 'deletado_em', 'criado_em', 'id']);
  expect(await q('SELECT COUNT(*) AS n FROM arquivo WHERE deletado_em IS NULL')).toEqual([{ n: 2 }]);
});
