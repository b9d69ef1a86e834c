import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0021 forgets the platform times stored more than ten minutes ahead of its clock (a
 * conversation's and a message's `suporte_atualizada_em`, the copy a status correction holds,
 * a phone link's `mensagem_em`): kept, each held every later event out for good. Times up to ten
 * minutes ahead, and past ones, stay; run again, it changes nothing.
 */
const banco = bancoAntesDaMigracao('sales', MIGRACOES_SALES, '0021-sales-tempos-adiantados');
const { q, indice } = banco;

afterAll(() => banco.apagar());

const ADIANTE = "'9999-12-31 23:59:59'";
const QUASE = 'UTC_TIMESTAMP(3) + INTERVAL 5 MINUTE';
const PASSADO = "'2026-01-02 03:04:05'";

let suporteConversa = 1;
async function conversa(atualizadaEm: string, corrigidoSobre: string) {
  const id = randomUUID();
  await q(
    `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, contato_nome, contato_telefone, contato_telefone_digitos, status,
        ultima_mensagem, suporte_atualizada_em, status_corrigido_sobre, criado_em, atualizado_em)
      VALUES (?, ?, ?, 'Ana', '+55 11 3333-4444', '551133334444', 'pending', '', ${atualizadaEm}, ${corrigidoSobre}, NOW(3), NOW(3))`,
    [id, randomUUID(), suporteConversa++],
  );
  await q(
    `INSERT INTO conversa_mensagem (conversa_id, suporte_mensagem_id, id, autor, conteudo, criada_em, suporte_atualizada_em, criado_em, atualizado_em)
      VALUES (?, 1, ?, 'contato', 'oi', NOW(3), ${atualizadaEm}, NOW(3), NOW(3))`,
    [id, randomUUID()],
  );
  await q(`INSERT INTO contato_gateway (telefone_chave, config_system_gateway_id, mensagem_em, atualizado_em) VALUES (?, ?, ${atualizadaEm}, NOW(3))`, [id.slice(0, 13), randomUUID()]);
  return id;
}

const tempos = async (id: string) => ({
  ...(await q('SELECT suporte_atualizada_em IS NULL AS sem_tempo, status_corrigido_sobre IS NULL AS sem_correcao FROM conversa WHERE id = ?', [id]))[0],
  mensagem_sem_tempo: (await q('SELECT suporte_atualizada_em IS NULL AS n FROM conversa_mensagem WHERE conversa_id = ?', [id]))[0].n,
  vinculo_sem_tempo: (await q('SELECT mensagem_em IS NULL AS n FROM contato_gateway WHERE telefone_chave = ?', [id.slice(0, 13)]))[0].n,
});

test('platform times more than ten minutes ahead become no time; nearer and past ones stay', async () => {
  await banco.abrir();
  const adiantada = await conversa(ADIANTE, ADIANTE);
  const quase = await conversa(QUASE, QUASE);
  const passada = await conversa(PASSADO, PASSADO);

  expect(await migrar('sales', MIGRACOES_SALES.slice(0, indice + 1))).toEqual(['0021-sales-tempos-adiantados']);

  const nenhum = { sem_tempo: 0, sem_correcao: 0, mensagem_sem_tempo: 0, vinculo_sem_tempo: 0 };
  expect(await tempos(adiantada)).toEqual({ sem_tempo: 1, sem_correcao: 1, mensagem_sem_tempo: 1, vinculo_sem_tempo: 1 });
  expect(await tempos(quase)).toEqual(nenhum);
  expect(await tempos(passada)).toEqual(nenhum);

  const depois = await Promise.all([adiantada, quase, passada].map(tempos));
  await MIGRACOES_SALES[indice].up(bancoDoServico('sales').getQueryInterface());
  expect(await Promise.all([adiantada, quase, passada].map(tempos))).toEqual(depois);
});
