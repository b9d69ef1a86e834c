import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0019 writes the control characters of the contact names stored before as spaces, as
 * the webhook now stores them: `contato_busca` (name, a line break, the phone's digits) then has
 * one line break, and the contact searches find the name whole and the digits in the phone only.
 * Names without control characters are left as they are; run again, it changes nothing.
 */
const banco = bancoAntesDaMigracao('sales', MIGRACOES_SALES, '0019-sales-contato-sem-controles');
const { q, indice } = banco;

afterAll(() => banco.apagar());

let suporteConversa = 1;
async function conversa(contatoNome: string) {
  const id = randomUUID();
  await q(
    `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, contato_nome, contato_telefone, contato_telefone_digitos, status,
        ultima_mensagem, criado_em, atualizado_em)
      VALUES (?, ?, ?, ?, '+55 11 3333-4444', '551133334444', 'pending', '', NOW(3), NOW(3))`,
    [id, randomUUID(), suporteConversa++, contatoNome],
  );
  return id;
}

const nomeEBusca = async (id: string) => (await q('SELECT contato_nome AS nome, contato_busca AS busca FROM conversa WHERE id = ?', [id]))[0];

test("control characters of stored contact names become spaces, so `contato_busca` holds one line break; other names stay", async () => {
  await banco.abrir();
  const quebrada = await conversa('Ana\nLoja 60613');
  const tabulada = await conversa('Bruno\tSilva\u0085Jr');
  const comum = await conversa('Carla Souza 2');

  expect(await migrar('sales', MIGRACOES_SALES.slice(0, indice + 1))).toEqual(['0019-sales-contato-sem-controles']);

  expect(await nomeEBusca(quebrada)).toEqual({ nome: 'Ana Loja 60613', busca: 'ana loja 60613\n551133334444' });
  expect((await nomeEBusca(tabulada)).nome).toBe('Bruno Silva Jr');
  expect(await nomeEBusca(comum)).toEqual({ nome: 'Carla Souza 2', busca: 'carla souza 2\n551133334444' });

  const depois = await Promise.all([quebrada, tabulada, comum].map(nomeEBusca));
  await MIGRACOES_SALES[indice].up(bancoDoServico('sales').getQueryInterface());
  expect(await Promise.all([quebrada, tabulada, comum].map(nomeEBusca))).toEqual(depois);
});
