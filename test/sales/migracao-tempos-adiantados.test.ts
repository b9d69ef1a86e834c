import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0021 brings the platform times stored more than ten minutes ahead of its clock to the
 * webhook's rule (api/sales/tempos.ts): where they order events (a conversation's and a message's
 * `suporte_atualizada_em`, a phone link's `mensagem_em`) they become no time; where they date
 * messages (a message's `criada_em`, its conversation's last-message and hand-over marks) they
 * become ten minutes ahead; a team's correction of the status holds against the copies stamped
 * up to the migration. Times up to ten minutes ahead, and past ones, stay.
 */
const banco = bancoAntesDaMigracao('sales', MIGRACOES_SALES, '0021-sales-tempos-adiantados');
const { q, indice } = banco;

afterAll(() => banco.apagar());

const MARCAS = ['ultima_mensagem_em', 'ultima_mensagem_do_contato_em', 'ultima_mensagem_do_robo_em', 'transferida_contato_em', 'transferencia_falhou_contato_em'];
const texto = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

let suporteConversa = 1;
/** A conversation, its message and its phone's link, every time stored `em` but the marks `outras` names. */
async function conversa(em: Date, outras: Record<string, Date> = {}) {
  const id = randomUUID();
  const t = texto(em);
  const marca = (m: string) => (outras[m] ? texto(outras[m]) : t);
  await q(
    `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, contato_nome, contato_telefone, contato_telefone_digitos, status,
        ultima_mensagem, suporte_atualizada_em, status_corrigido_sobre, ${MARCAS.join(', ')}, criado_em, atualizado_em)
      VALUES (?, ?, ?, 'Ana', '+55 11 3333-4444', '551133334444', 'pending', '', ?, ?, ${MARCAS.map(() => '?').join(', ')}, NOW(3), NOW(3))`,
    [id, randomUUID(), suporteConversa++, t, t, ...MARCAS.map(marca)],
  );
  await q(
    `INSERT INTO conversa_mensagem (conversa_id, suporte_mensagem_id, id, autor, conteudo, criada_em, suporte_atualizada_em, criado_em, atualizado_em)
      VALUES (?, 1, ?, 'contato', 'oi', ?, ?, NOW(3), NOW(3))`,
    [id, randomUUID(), t, t],
  );
  await q('INSERT INTO contato_gateway (telefone_chave, config_system_gateway_id, mensagem_em, atualizado_em) VALUES (?, ?, ?, NOW(3))', [id.slice(0, 13), randomUUID(), t]);
  return id;
}

const ms = (v: unknown) => (v === null ? null : new Date(`${String(v).replace(' ', 'T')}Z`).getTime());
async function tempos(id: string) {
  const [c] = await q(
    `SELECT ${['suporte_atualizada_em', 'status_corrigido_sobre', ...MARCAS].map((m) => `DATE_FORMAT(${m}, '%Y-%m-%d %H:%i:%s.%f') AS ${m}`).join(', ')} FROM conversa WHERE id = ?`,
    [id],
  );
  const [m] = await q("SELECT DATE_FORMAT(criada_em, '%Y-%m-%d %H:%i:%s.%f') AS criada_em, DATE_FORMAT(suporte_atualizada_em, '%Y-%m-%d %H:%i:%s.%f') AS atualizada FROM conversa_mensagem WHERE conversa_id = ?", [id]);
  const [v] = await q("SELECT DATE_FORMAT(mensagem_em, '%Y-%m-%d %H:%i:%s.%f') AS em FROM contato_gateway WHERE telefone_chave = ?", [id.slice(0, 13)]);
  return {
    conversa: Object.fromEntries(Object.entries(c).map(([k, x]) => [k, ms(x)])),
    mensagem: { criada_em: ms(m.criada_em), suporte_atualizada_em: ms(m.atualizada) },
    vinculo: ms(v.em),
  };
}

test('times more than ten minutes ahead: no time where they order, ten minutes ahead where they date; nearer and past ones stay', async () => {
  await banco.abrir();
  const agora = Date.now();
  const segundo = (d: number) => Math.floor(d / 1000) * 1000;
  const adiantadas = [await conversa(new Date('9999-12-31T23:59:59Z')), await conversa(new Date(agora + 20 * 60_000))];
  const ficam = [new Date(agora + 5 * 60_000), new Date('2026-01-02T03:04:05Z')].map((d) => new Date(segundo(d.getTime())));
  const ficando = await Promise.all(ficam.map((d) => conversa(d)));
  const antes = await Promise.all(ficando.map(tempos));

  const inicio = Date.now();
  expect(await migrar('sales', MIGRACOES_SALES.slice(0, indice + 1))).toEqual(['0021-sales-tempos-adiantados']);
  const fim = Date.now();

  for (const id of adiantadas) {
    const t = await tempos(id);
    expect(t.conversa.suporte_atualizada_em).toBeNull();
    expect(t.mensagem.suporte_atualizada_em).toBeNull();
    expect(t.vinculo).toBeNull();
    expect(t.conversa.status_corrigido_sobre).toBeGreaterThanOrEqual(inicio - 1);
    expect(t.conversa.status_corrigido_sobre).toBeLessThanOrEqual(fim);
    const limite = t.mensagem.criada_em!;
    expect(limite).toBeGreaterThanOrEqual(segundo(inicio + 10 * 60_000));
    expect(limite).toBeLessThanOrEqual(fim + 10 * 60_000);
    for (const marca of MARCAS.filter((m) => m !== 'transferencia_falhou_contato_em')) expect([marca, t.conversa[marca]]).toEqual([marca, limite]);
    // a refusal at the robot's answer is of a wait before the current one (below)
    expect(t.conversa.transferencia_falhou_contato_em).toBe(limite - 1000);
  }
  expect(await Promise.all(ficando.map(tempos))).toEqual(antes);
  expect(antes[0].mensagem.criada_em).toBe(ficam[0].getTime());

  // run again, it changes nothing
  const depois = await Promise.all([...adiantadas, ...ficando].map(tempos));
  await MIGRACOES_SALES[indice].up(bancoDoServico('sales').getQueryInterface());
  expect(await Promise.all([...adiantadas, ...ficando].map(tempos))).toEqual(depois);
});

test("a conversation's marks keep the order the hand-over reads: the robot's answer or a hand-over before the contact's last message stays before it, one at or after it stays so", async () => {
  const adiante = (s: number) => new Date(Date.UTC(9999, 11, 31, 23, 59, s));
  // the contact waiting: the robot answered before, a hand-over covered an earlier message
  const esperando = await conversa(adiante(50), {
    ultima_mensagem_do_robo_em: adiante(40),
    ultima_mensagem_do_contato_em: adiante(50),
    transferida_contato_em: adiante(30),
    transferencia_falhou_contato_em: adiante(30),
  });
  // answered: the robot after the contact, the hand-over covering the contact's last message
  const atendida = await conversa(adiante(50), { ultima_mensagem_do_robo_em: adiante(55), ultima_mensagem_do_contato_em: adiante(50), transferida_contato_em: adiante(50) });
  // a hand-over refused for the current wait (its start after the robot's answer): still refused for it
  const recusada = await conversa(adiante(50), {
    ultima_mensagem_do_robo_em: adiante(40),
    ultima_mensagem_do_contato_em: adiante(50),
    transferida_contato_em: adiante(30),
    transferencia_falhou_contato_em: adiante(45),
  });
  // the contact's last message not ahead: every mark ahead of it stays after it
  const contatoNoPassado = await conversa(adiante(50), { ultima_mensagem_do_contato_em: new Date('2026-01-02T03:04:05Z') });
  await MIGRACOES_SALES[indice].up(bancoDoServico('sales').getQueryInterface());

  const r = (await tempos(recusada)).conversa;
  expect(r.transferencia_falhou_contato_em).toBe(r.ultima_mensagem_do_contato_em);
  const e = (await tempos(esperando)).conversa;
  expect(e.ultima_mensagem_do_robo_em).toBe(e.ultima_mensagem_do_contato_em! - 1000);
  expect(e.transferida_contato_em).toBe(e.ultima_mensagem_do_contato_em! - 1000);
  expect(e.transferencia_falhou_contato_em).toBe(e.ultima_mensagem_do_contato_em! - 1000);
  const a = (await tempos(atendida)).conversa;
  expect(a.ultima_mensagem_do_robo_em).toBe(a.ultima_mensagem_do_contato_em);
  expect(a.transferida_contato_em).toBe(a.ultima_mensagem_do_contato_em);
  const p = (await tempos(contatoNoPassado)).conversa;
  expect(p.ultima_mensagem_do_contato_em).toBe(Date.parse('2026-01-02T03:04:05Z'));
  expect(p.ultima_mensagem_do_robo_em).toBeGreaterThan(p.ultima_mensagem_do_contato_em!);
  expect(p.transferida_contato_em).toBeGreaterThan(p.ultima_mensagem_do_contato_em!);
});
