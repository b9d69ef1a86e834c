import { randomUUID } from 'node:crypto';
import { lerContagens } from '../../lib/contagem';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_FILES } from '../../models/files/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Files migration 0006 counts each application's live files once, then keeps the counts by
 * triggers; run again, it builds the same counts.
 */
const banco = bancoAntesDaMigracao('files', MIGRACOES_FILES, '0006-files-contagem');
const { q, indice } = banco;

afterAll(() => banco.apagar());

async function arquivo(aplicativoId: string, deletado = false): Promise<string> {
  const id = randomUUID();
  await q(
    `INSERT INTO arquivo (id, aplicativo_id, nome, tipo_mime, tamanho, sha256, criado_em, deletado_em)
     VALUES (?, ?, 'a.txt', 'text/plain', 1, ?, UTC_TIMESTAMP(3), ?)`,
    [id, aplicativoId, 'a'.repeat(64), deletado ? new Date() : null],
  );
  return id;
}

const contagens = async () =>
  Object.fromEntries(await lerContagens({ banco: bancoDoServico('files'), base: 'arquivo_contagem', deltas: 'arquivo_contagem_delta', chave: 'aplicativo_id' }));

test('the live files already stored are counted, the deleted ones not; the triggers keep the counts; run again, the same counts', async () => {
  await banco.abrir();
  const vivos = [await arquivo('app-a'), await arquivo('app-a'), await arquivo('app-b')];
  await arquivo('app-a', true);
  await arquivo('app-c', true);

  expect(await migrar('files', MIGRACOES_FILES.slice(0, indice + 1))).toEqual(['0006-files-contagem']);
  expect(await contagens()).toEqual({ 'app-a': 2, 'app-b': 1 });
  expect(await q('SELECT * FROM arquivo_contagem_delta')).toEqual([]);

  // from now on: an upload, a deletion, a row removed for good, a file of one application moved to another
  await arquivo('app-c');
  await q('UPDATE arquivo SET deletado_em = UTC_TIMESTAMP(3) WHERE id = ?', [vivos[0]]);
  await q('DELETE FROM arquivo WHERE id = ?', [vivos[2]]);
  await q("UPDATE arquivo SET aplicativo_id = 'app-d' WHERE id = ?", [vivos[1]]);
  expect(await contagens()).toEqual({ 'app-a': 0, 'app-b': 0, 'app-c': 1, 'app-d': 1 });

  await MIGRACOES_FILES[indice].up(bancoDoServico('files').getQueryInterface());
  expect(await contagens()).toEqual({ 'app-c': 1, 'app-d': 1 });
  expect(await q('SELECT * FROM arquivo_contagem_delta')).toEqual([]);
});
