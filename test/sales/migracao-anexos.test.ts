import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * The migrations of the attachment copies, on a database that already holds attachments: each adds
 * what it adds with the rows kept, and run again after a stop that left its change made but not
 * recorded, it changes nothing and does not fail.
 */

const ANTES = '2026-01-10 03:04:05.678';

/** The database before `nome`, with one attachment stored; answers it, the migration and the attachment's id. */
async function bancoComAnexo(nome: string) {
  const banco = bancoAntesDaMigracao('sales', MIGRACOES_SALES, nome);
  await banco.abrir();
  const id = randomUUID();
  await banco.q(
    `INSERT INTO anexo_da_mensagem (id, mensagem_id, conversa_id, endereco, nome, tipo, tentativas, criado_em, atualizado_em)
      VALUES (?, ?, ?, 'https://chat.exemplo.test/a.pdf', 'a.pdf', 'file', 6, ?, ?)`,
    [id, randomUUID(), randomUUID(), ANTES, ANTES],
  );
  return { banco, migracao: MIGRACOES_SALES[banco.indice], id };
}

test.each([
  ['0016 marks no copy stopped: the attachments kept as they were, `parada` false', '0016-sales-anexo-parada', 'parada', 0],
  [
    '0017 adds when the last attempt began, unknown (null) for the attachments already tried, which wait for nothing',
    '0017-sales-anexo-ultima-tentativa',
    'ultima_tentativa_em',
    null,
  ],
])('%s; run again, nothing changes', async (_caso, nome, coluna, esperado) => {
  const { banco, migracao, id } = await bancoComAnexo(nome);
  try {
    expect(await migrar('sales', MIGRACOES_SALES.slice(0, banco.indice + 1))).toEqual([migracao.name]);
    const linha = async () => (await banco.q(`SELECT tentativas, ${coluna} FROM anexo_da_mensagem WHERE id = ?`, [id]))[0];
    expect(await linha()).toEqual({ tentativas: 6, [coluna]: esperado });
    await migracao.up(bancoDoServico('sales').getQueryInterface());
    expect(await linha()).toEqual({ tentativas: 6, [coluna]: esperado });
  } finally {
    await banco.apagar();
  }
});

test('0018 creates the list of keys to clean, empty; run again, it keeps what is listed', async () => {
  const { banco, migracao, id } = await bancoComAnexo('0018-sales-chave-a-apagar');
  try {
    expect(await migrar('sales', MIGRACOES_SALES.slice(0, banco.indice + 1))).toEqual([migracao.name]);
    expect(await banco.q('SELECT chave FROM chave_a_apagar')).toEqual([]);
    await banco.q('INSERT INTO chave_a_apagar (chave, criado_em) VALUES (?, ?)', [`anexo-${id}`, ANTES]);
    await migracao.up(bancoDoServico('sales').getQueryInterface());
    expect(await banco.q('SELECT chave FROM chave_a_apagar')).toEqual([{ chave: `anexo-${id}` }]);
  } finally {
    await banco.apagar();
  }
});
