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

/** The indexes of `arquivo` other than its key: name → columns, in order. */
async function indices() {
  const linhas = await q(
    `SELECT index_name AS indice, column_name AS coluna, non_unique AS repetivel FROM information_schema.statistics
      WHERE table_schema = DATABASE() AND table_name = 'arquivo' AND index_name <> 'PRIMARY' ORDER BY index_name, seq_in_index`,
  );
  const r: Record<string, string> = {};
  for (const l of linhas) r[l.indice] = `${r[l.indice] ? `${r[l.indice]}, ` : Number(l.repetivel) ? '' : 'UNIQUE '}${l.coluna.toLowerCase()}`;
  return r;
}

test('files stored before it stay, live; the listing index holds the deleted apart and a key is unique among live files only; run again, nothing changes', async () => {
  await banco.abrir();
  const ids = [randomUUID(), randomUUID()];
  for (const [i, id] of ids.entries()) {
    await q(
      `INSERT INTO arquivo (id, aplicativo_id, nome, tipo_mime, tamanho, sha256, criado_em, chave_de_idempotencia)
       VALUES (?, 'app-1', ?, 'text/plain', 3, ?, UTC_TIMESTAMP(3), ?)`,
      [id, `antes-${i}.txt`, 'a'.repeat(64), i ? null : 'chave-1'],
    );
  }
  expect(await indices()).toEqual({
    arquivo_aplicativo: 'aplicativo_id, criado_em, id',
    arquivo_chave_de_idempotencia: 'UNIQUE aplicativo_id, chave_de_idempotencia',
  });

  expect(await migrar('files', MIGRACOES_FILES.slice(0, indice + 1))).toEqual(['0005-files-exclusao-logica']);
  expect(await q('SELECT id, nome, chave_de_idempotencia, deletado_em FROM arquivo ORDER BY nome')).toEqual([
    { id: ids[0], nome: 'antes-0.txt', chave_de_idempotencia: 'chave-1', deletado_em: null },
    { id: ids[1], nome: 'antes-1.txt', chave_de_idempotencia: null, deletado_em: null },
  ]);
  const depois = {
    arquivo_aplicativo_vivo: 'aplicativo_id, deletado_em, criado_em, id',
    arquivo_chave_viva: 'UNIQUE aplicativo_id, chave_viva',
  };
  expect(await indices()).toEqual(depois);
  // a live file's key is taken; once it is deleted, the key is free, and the deleted row keeps it
  const novo = (id: string) =>
    q(`INSERT INTO arquivo (id, aplicativo_id, nome, tipo_mime, tamanho, sha256, criado_em, chave_de_idempotencia)
       VALUES (?, 'app-1', 'depois.txt', 'text/plain', 3, ?, UTC_TIMESTAMP(3), 'chave-1')`, [id, 'b'.repeat(64)]);
  await expect(novo(randomUUID())).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
  await q('UPDATE arquivo SET deletado_em = UTC_TIMESTAMP(3) WHERE id = ?', [ids[0]]);
  await novo(randomUUID());
  expect(await q('SELECT COUNT(*) AS n FROM arquivo WHERE chave_de_idempotencia = ?', ['chave-1'])).toEqual([{ n: 2 }]);

  await MIGRACOES_FILES[indice].up(bancoDoServico('files').getQueryInterface());
  expect(await indices()).toEqual(depois);
});
