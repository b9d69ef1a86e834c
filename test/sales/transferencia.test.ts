import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import nock from 'nock';
import { esperaAposFalhas, ProgressoDaTransferencia, SEM_RESPOSTA, TENTATIVAS_POR_ESPERA, transferirSemResposta } from '../../api/sales/transferencia';
import { loadConfig } from '../../config';
import { banco } from '../../lib/database';
import { agendarRepetiveis } from '../../lib/runner';
import { fila } from '../../queues/fila';
import { filaSalesTransferencia } from '../../queues/sales-transferencia';
import { ConfigSystem } from '../../models/sales';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { esperarAte } from '../helpers/espera';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { eventoDeConversa, eventoDeMensagem, idDeMensagem, idDoSuporte, mensagemAninhada, novoContato, Sales, salesDe } from './apoio';

/** The contact may wait 60 s here for the robot (SALES_TRANSFERENCIA_ESPERA_SEGUNDOS). */
const ESPERA_S = 60;
const CHAT = 'https://chat.exemplo.test';
/** Chat platforms of other systems. */
const QUEBRADO = 'https://quebrado.exemplo.test';
const OUTRO = 'https://outro-chat.exemplo.test';
const CONTA = 9;

let suite: SuiteDeTeste;
let s: Sales;
let sistema: { id: string; token: string };

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales'], { workers: false, env: { SALES_TRANSFERENCIA_ESPERA_SEGUNDOS: String(ESPERA_S) } });
  s = salesDe(suite);
  sistema = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
});

/**
 * What the chat platforms say of each conversation (GET conversations/{id}): pending unless set
 * here; a number answers that HTTP status instead, `null` a conversation without its status.
 */
const statusNoChat = new Map<number, string | number | null>();
beforeEach(() => {
  statusNoChat.clear();
  for (const plataforma of [CHAT, QUEBRADO, OUTRO]) {
    nock(plataforma)
      .persist()
      .get(/^\/api\/v1\/accounts\/\d+\/conversations\/\d+$/)
      .reply((uri) => {
        const conversa = Number(uri.split('/').pop());
        const status = statusNoChat.has(conversa) ? statusNoChat.get(conversa) : 'pending';
        if (typeof status === 'number') return [status, { error: 'Access to this endpoint is not authorized for bots' }];
        return [200, status === null ? { id: conversa } : { id: conversa, status }];
      });
  }
});
afterEach(() => nock.cleanAll());
afterAll(() => suite?.encerrar());

const segundosAtras = (n: number) => new Date(Date.now() - n * 1000);

/** What a robot's message carries: every robot of these tests answers as the same agent bot. */
const DO_ROBO = { tipo: 'outgoing' as const, remetente: { id: 3, type: 'agent_bot' as const } };

/** A conversation with the robot whose contact wrote `esperaS` seconds ago; `roboRespondeu` adds the robot's answer after it. */
async function esperando(o: { esperaS: number; roboRespondeu?: boolean; status?: string; doSistema?: { id: string; token: string } }) {
  const conversa = idDoSuporte();
  const contato = novoContato();
  const alvo = o.doSistema ?? sistema;
  await s.registrar(alvo, eventoDeMensagem({ conversa, contato, conta: CONTA, status: o.status ?? 'pending', criadaEm: segundosAtras(o.esperaS) }));
  if (o.roboRespondeu) {
    await s.registrar(
      alvo,
      eventoDeMensagem({ conversa, contato, conta: CONTA, status: o.status ?? 'pending', ...DO_ROBO, criadaEm: segundosAtras(o.esperaS - 1) }),
    );
  }
  return { conversa, registro: await s.conversaDoSuporte(conversa) };
}

/** Every hand-over the chat platform is asked for, each answered as done. */
function chamadasAoChat(): string[] {
  const chamadas: string[] = [];
  nock(CHAT)
    .post(/toggle_status/)
    .times(10)
    .reply((uri) => (chamadas.push(uri), [200, { payload: { success: true, current_status: 'open' } }]));
  return chamadas;
}
const pedida = (chamadas: string[], conversa: number) => chamadas.some((u) => u.includes(`/conversations/${conversa}/`));

/** The chat platform's toggle_status of a conversation, answering `status` once `antes` (what happens meanwhile) is done. */
const abrirNoChat = (conversa: number, status = 200, antes: () => Promise<unknown> = async () => undefined) =>
  nock(CHAT)
    .post(`/api/v1/accounts/${CONTA}/conversations/${conversa}/toggle_status`, { status: 'open' })
    .matchHeader('api_access_token', 'token-da-api')
    .reply(async () => {
      await antes();
      return [status, { payload: { success: status === 200, current_status: 'open' } }];
    });

/** Where a conversation's hand-over stands after refusals. */
const adiada = async (id: string) => {
  const [[linha]] = (await banco('sales').query('SELECT transferencia_falhas, transferencia_tentar_apos FROM conversa WHERE id = ?', { replacements: [id] })) as any;
  return linha;
};

/** The platform's own webhook saying the conversation is open. */
const abertaNoChat = (conversa: number) =>
  s.registrar(sistema, { ...eventoDeConversa('conversation_status_changed', { conversa, status: 'open' }), account: { id: CONTA, name: 'Conta' } });

describe('the hand-over trigger', () => {
  it('opens in the chat platform a conversation whose contact waited too long for the robot, then records open, transferida_em and sem_resposta', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    const chat = abrirNoChat(conversa);
    const antes = Date.now();
    const progresso: ProgressoDaTransferencia[] = [];
    const r = await transferirSemResposta(undefined, (p) => progresso.push(p));
    expect(chat.isDone()).toBe(true);
    expect(r.transferidas).toBeGreaterThanOrEqual(1);
    // the run reports as it goes, and its last report is the whole run
    expect(progresso.at(-1)).toEqual({ vistas: progresso.at(-1)!.de, de: expect.any(Number), ...r });
    expect(progresso.map((p) => p.vistas)).toEqual([...progresso.map((p) => p.vistas)].sort((a, b) => a - b));
    const depois = await s.conversaDoSuporte(conversa);
    expect(depois).toMatchObject({ id: registro.id, status: 'open', transferida_motivo: 'sem_resposta' });
    expect(Date.parse(depois.transferida_em)).toBeGreaterThanOrEqual(antes - 5);
  });

  it('asked to stop (a worker shutting down), it calls the platform no more: the conversation waits for the next run', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    const chat = abrirNoChat(conversa);
    expect(await transferirSemResposta(undefined, undefined, AbortSignal.abort())).toEqual({ transferidas: 0, falhas: 0 });
    expect(chat.isDone()).toBe(false);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ id: registro.id, status: 'pending' });
    expect((await transferirSemResposta()).transferidas).toBeGreaterThanOrEqual(1);
    expect(chat.isDone()).toBe(true);
  });

  it('a stop during a call to the platform cuts the call: the run ends at once, the wait is no refusal, and the next run hands it over', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    const parar = new AbortController();
    let paradaEm = 0;
    nock(CHAT)
      .post(`/api/v1/accounts/${CONTA}/conversations/${conversa}/toggle_status`)
      .reply(async () => {
        parar.abort();
        paradaEm = Date.now();
        await new Promise((r) => setTimeout(r, 3_000).unref());
        return [200, { payload: { current_status: 'open' } }];
      });
    await transferirSemResposta(undefined, undefined, parar.signal);
    expect(paradaEm).toBeGreaterThan(0);
    expect(Date.now() - paradaEm).toBeLessThan(1_500);
    expect(await adiada(registro.id)).toEqual({ transferencia_falhas: 0, transferencia_tentar_apos: null });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    const chat = abrirNoChat(conversa);
    await transferirSemResposta();
    expect(chat.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
  });

  it('leaves alone a contact still within the wait, one the robot answered, and conversations not with the robot', async () => {
    const recente = await esperando({ esperaS: ESPERA_S - 20 });
    const respondida = await esperando({ esperaS: ESPERA_S + 30, roboRespondeu: true });
    const comEquipe = await esperando({ esperaS: ESPERA_S + 30, status: 'open' });
    const resolvida = await esperando({ esperaS: ESPERA_S + 30, status: 'resolved' });
    // one that is due, so the run is known to have handed over what it should
    const devida = await esperando({ esperaS: ESPERA_S + 30 });
    const chamadas = chamadasAoChat();
    await transferirSemResposta();
    expect(pedida(chamadas, devida.conversa)).toBe(true);
    expect(await s.conversaDoSuporte(devida.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    for (const c of [recente, respondida, comEquipe, resolvida]) {
      expect(pedida(chamadas, c.conversa)).toBe(false);
      const depois = await s.conversaDoSuporte(c.conversa);
      expect(depois).toMatchObject({ status: c.registro.status, transferida_em: null, transferida_motivo: null });
    }
  });

  it('the wait runs from the first message the robot left unanswered: a contact writing again while waiting does not start it over', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', conteudo: 'alguém aí?', criadaEm: segundosAtras(10) }));
    const chat = abrirNoChat(conversa);
    await transferirSemResposta();
    expect(chat.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ id: registro.id, status: 'open', transferida_motivo: 'sem_resposta' });
  });

  it('a wait starts after the robot\'s last answer, and after the messages an earlier hand-over covered', async () => {
    // handed over, given back to the robot, and the contact wrote again just now
    const { conversa: devolvida } = await esperando({ esperaS: ESPERA_S + 30 });
    abrirNoChat(devolvida);
    await transferirSemResposta();
    expect(await s.conversaDoSuporte(devolvida)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    await s.registrar(sistema, { ...eventoDeConversa('conversation_status_changed', { conversa: devolvida, status: 'pending' }), account: { id: CONTA, name: 'Conta' } });
    await s.registrar(sistema, eventoDeMensagem({ conversa: devolvida, conta: CONTA, status: 'pending', criadaEm: segundosAtras(5) }));
    // answered long ago; the contact wrote again within the wait, twice
    const { conversa: respondida } = await esperando({ esperaS: ESPERA_S + 90 });
    await s.registrar(sistema, eventoDeMensagem({ conversa: respondida, conta: CONTA, status: 'pending', ...DO_ROBO, criadaEm: segundosAtras(ESPERA_S + 60) }));
    for (const atras of [ESPERA_S - 20, 5]) {
      await s.registrar(sistema, eventoDeMensagem({ conversa: respondida, conta: CONTA, status: 'pending', criadaEm: segundosAtras(atras) }));
    }

    const devida = await esperando({ esperaS: ESPERA_S + 30 });
    const chamadas = chamadasAoChat();
    await transferirSemResposta();
    expect(pedida(chamadas, devida.conversa)).toBe(true);
    for (const conversa of [respondida, devolvida]) {
      expect(pedida(chamadas, conversa)).toBe(false);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending' });
    }
  });

  it("a robot answer within the same second counts whichever of the platform's copies arrives first: the one in a conversation event (whole seconds) before the message event (milliseconds)", async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const pergunta = new Date(Math.floor(Date.now() / 1000 - ESPERA_S - 30) * 1000 + 700);
    const resposta = new Date(pergunta.getTime() + 250);
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conta: CONTA, criadaEm: pergunta }));
    const idDaResposta = idDeMensagem();
    // conversation_updated (waiting_since cleared) carries the answer as its last message, in whole seconds
    await s.registrar(sistema, {
      ...eventoDeConversa('conversation_updated', {
        conversa,
        contato,
        mensagens: [mensagemAninhada({ id: idDaResposta, conversa, conteudo: 'Olá! Como posso ajudar?', tipo: 1, senderType: 'AgentBot', senderId: 3, criadaEm: resposta })],
      }),
      account: { id: CONTA, name: 'Conta' },
    });
    await s.registrar(
      sistema,
      eventoDeMensagem({ conversa, contato, conta: CONTA, mensagem: idDaResposta, conteudo: 'Olá! Como posso ajudar?', ...DO_ROBO, criadaEm: resposta }),
    );
    const registro = await s.conversaDoSuporte(conversa);
    expect((await s.mensagens(registro.id)).map((m: any) => m.autor)).toEqual(['contato', 'robo']);

    const devida = await esperando({ esperaS: ESPERA_S + 30 });
    const chamadas = chamadasAoChat();
    await transferirSemResposta();
    expect(pedida(chamadas, devida.conversa)).toBe(true);
    expect(pedida(chamadas, conversa)).toBe(false);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
  });

  it('when the chat platform refuses, the conversation stays with the robot and is tried again a minute later, then after twice as long each time', async () => {
    // a system of its own: the earlier tests' waits, not tried yet, would go first in each run
    const proprio = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30, doSistema: proprio });
    // a little ahead, so the refusal is counted from it rather than from the clock
    const t0 = new Date(Date.now() + 5_000);
    const recusa = abrirNoChat(conversa, 500);
    expect((await transferirSemResposta(t0)).falhas).toBeGreaterThanOrEqual(1);
    expect(recusa.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    expect(await adiada(registro.id)).toEqual({ transferencia_falhas: 1, transferencia_tentar_apos: new Date(t0.getTime() + 60_000) });

    // runs are a minute apart (SALES_TRANSFERENCIA_INTERVALO_SEGUNDOS): a back-off due within half
    // of one is tried by the run starting now
    const cedo = abrirNoChat(conversa, 500);
    await transferirSemResposta(new Date(t0.getTime() + 29_000));
    expect(cedo.isDone()).toBe(false);
    const t1 = new Date(t0.getTime() + 31_000);
    await transferirSemResposta(t1);
    expect(cedo.isDone()).toBe(true);
    expect(await adiada(registro.id)).toEqual({ transferencia_falhas: 2, transferencia_tentar_apos: new Date(t1.getTime() + 120_000) });

    const aceite = abrirNoChat(conversa);
    await transferirSemResposta(new Date(t1.getTime() + 91_000));
    expect(aceite.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(await adiada(registro.id)).toEqual({ transferencia_falhas: 0, transferencia_tentar_apos: null });
  });

  it('a new message of the contact starts a new wait: the back-off of an earlier one neither holds it back nor grows', async () => {
    const { conversa, registro } = await esperando({ esperaS: 3 * 3600 });
    // an earlier wait was refused seven times; its next try would be an hour away
    await banco('sales').query(
      `UPDATE conversa SET transferencia_falhas = 7, transferencia_falhou_em = ?, transferencia_falhou_contato_em = ultima_mensagem_do_contato_em,
          transferencia_tentar_apos = ? WHERE id = ?`,
      { replacements: [segundosAtras(2 * 3600), new Date(Date.now() + 3_600_000), registro.id] },
    );
    // since then the robot answered, and the contact wrote again
    await s.registrar(
      sistema,
      eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', ...DO_ROBO, criadaEm: segundosAtras(ESPERA_S + 20) }),
    );
    await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', criadaEm: segundosAtras(ESPERA_S + 10) }));
    const t0 = new Date(Date.now() + 5_000);
    const recusa = abrirNoChat(conversa, 503);
    await transferirSemResposta(t0);
    expect(recusa.isDone()).toBe(true);
    expect(await adiada(registro.id)).toEqual({ transferencia_falhas: 1, transferencia_tentar_apos: new Date(t0.getTime() + 60_000) });
  });

  it('a contact writing again within a refused wait does not hasten its next try, and its next refusal counts as the second', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    const t0 = new Date();
    abrirNoChat(conversa, 503);
    await transferirSemResposta(t0);
    const primeira = await adiada(registro.id);
    expect(primeira).toMatchObject({ transferencia_falhas: 1 });
    await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', conteudo: 'alguém aí?', criadaEm: segundosAtras(5) }));
    const cedo = abrirNoChat(conversa, 503);
    await transferirSemResposta(new Date(t0.getTime() + 10_000));
    expect(cedo.isDone()).toBe(false);
    expect(await adiada(registro.id)).toEqual(primeira);
    await transferirSemResposta(new Date(primeira.transferencia_tentar_apos.getTime() + 1_000));
    expect(cedo.isDone()).toBe(true);
    expect(await adiada(registro.id)).toMatchObject({ transferencia_falhas: 2 });
  });

  it('the wait after refusals doubles from 1 minute and stops growing at an hour', () => {
    expect([1, 2, 3, 4, 6, 7, 30].map(esperaAposFalhas)).toEqual([60_000, 120_000, 240_000, 480_000, 1_920_000, 3_600_000, 3_600_000]);
  });

  it('a system refused three times in a row is left for the next run; other systems, and newer conversations, are still handed over', async () => {
    const quebrado = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const recusadas = [];
    for (let i = 0; i < 4; i++) recusadas.push(await esperando({ esperaS: ESPERA_S + 50 - i, doSistema: quebrado }));
    const outro = await esperando({ esperaS: ESPERA_S + 40 });
    const chamadas = recusadas.map((r) => abrirNoChat(r.conversa, 404));
    const aceite = abrirNoChat(outro.conversa);
    const t0 = new Date();
    await transferirSemResposta(t0);
    expect(chamadas.map((c) => c.isDone())).toEqual([true, true, true, false]);
    expect(aceite.isDone()).toBe(true);
    expect(await adiada(recusadas[3].registro.id)).toEqual({ transferencia_falhas: 0, transferencia_tentar_apos: null });

    // the next run: the three refused wait their minute, the fourth gets its turn
    await transferirSemResposta(new Date(t0.getTime() + 30_000));
    expect(chamadas[3].isDone()).toBe(true);
  });

  it('a system whose whole backlog the platform refuses does not take the run\'s places from the others', async () => {
    const quebrado = await s.criarSistema('suporte', { url: QUEBRADO, conta_id: CONTA, token_api: 'token-da-api' });
    // more refused conversations, all waiting longer, than a run tries of one system
    for (let lote = 0; lote < 11; lote++) {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          s.registrar(quebrado, eventoDeMensagem({ conversa: idDoSuporte(), contato: novoContato(), conta: CONTA, status: 'pending', criadaEm: segundosAtras(ESPERA_S + 500 - lote * 20 - i) })),
        ),
      );
    }
    const outro = await esperando({ esperaS: ESPERA_S + 10 });
    let recusas = 0;
    nock(QUEBRADO).post(/toggle_status/).times(220).reply(() => (recusas++, [404, {}]));
    const aceite = abrirNoChat(outro.conversa);
    const r = await transferirSemResposta();
    expect(aceite.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(outro.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    // the refused system is left after three refusals in a row, its other conversations untouched
    expect({ falhas: r.falhas, recusas }).toEqual({ falhas: 3, recusas: 3 });
  });

  it('systems take turns in a run: another system\'s oldest wait goes right after this one\'s, before its older backlog', async () => {
    const outroSistema = await s.criarSistema('suporte', { url: OUTRO, conta_id: CONTA, token_api: 'token-da-api' });
    const backlog: Awaited<ReturnType<typeof esperando>>[] = [];
    for (let i = 0; i < 3; i++) backlog.push(await esperando({ esperaS: ESPERA_S + 900 - i }));
    const doOutro = await esperando({ esperaS: ESPERA_S + 10, doSistema: outroSistema });
    const ordem: number[] = [];
    const resposta = (uri: string) => {
      ordem.push(Number(/conversations\/(\d+)\//.exec(uri)![1]));
      return [200, { payload: { success: true, current_status: 'open' } }] as [number, object];
    };
    nock(CHAT).post(/toggle_status/).times(20).reply(resposta);
    nock(OUTRO).post(/toggle_status/).reply(resposta);
    await transferirSemResposta();
    const doTeste = ordem.filter((id) => [...backlog.map((b) => b.conversa), doOutro.conversa].includes(id));
    expect(doTeste).toEqual([backlog[0].conversa, doOutro.conversa, backlog[1].conversa, backlog[2].conversa]);
  });

  it('a system whose stored API token cannot be read fails its own conversations only', async () => {
    const ilegivel = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    await banco('sales').query("UPDATE config_system SET token_api_cifrado = 'v1.AAAA.AAAA.AAAA' WHERE id = ?", { replacements: [ilegivel.id] });
    const boa = await esperando({ esperaS: ESPERA_S + 45 });
    const respondida = await esperando({ esperaS: ESPERA_S + 40, doSistema: ilegivel });
    const naoLida = await esperando({ esperaS: ESPERA_S + 35, doSistema: ilegivel });
    // while the good one is opened, the robot answers the first conversation of the unreadable
    // system: its access is then never needed, and never read
    abrirNoChat(boa.conversa, 200, () =>
      s.registrar(
        ilegivel,
        eventoDeMensagem({ conversa: respondida.conversa, conta: CONTA, status: 'pending', ...DO_ROBO }),
      ),
    );
    const r = await transferirSemResposta();
    expect(r.falhas).toBeGreaterThanOrEqual(1);
    expect(await s.conversaDoSuporte(boa.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(await s.conversaDoSuporte(naoLida.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    expect((await adiada(naoLida.registro.id)).transferencia_falhas).toBe(1);
  });

  it("the database failing to read a system is no refusal by the platform: that conversation's wait is unchanged, and the next one reads the system again", async () => {
    const proprio = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const primeira = await esperando({ esperaS: ESPERA_S + 50, doSistema: proprio });
    const segunda = await esperando({ esperaS: ESPERA_S + 40, doSistema: proprio });
    const queda = Object.assign(new Error('connect ECONNREFUSED'), { name: 'SequelizeConnectionRefusedError' });
    const ler = ConfigSystem.findByPk.bind(ConfigSystem);
    let quedas = 0;
    // the first read of this system fails (the earlier tests' systems have conversations in the run too)
    const leitura = jest.spyOn(ConfigSystem, 'findByPk').mockImplementation((async (id: string) => {
      if (id === proprio.id && quedas++ === 0) throw queda;
      return ler(id);
    }) as typeof ConfigSystem.findByPk);
    const aceite = abrirNoChat(segunda.conversa);
    try {
      await transferirSemResposta();
      expect(quedas).toBe(2);
    } finally {
      leitura.mockRestore();
    }
    expect(aceite.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(segunda.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(await s.conversaDoSuporte(primeira.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    expect(await adiada(primeira.registro.id)).toEqual({ transferencia_falhas: 0, transferencia_tentar_apos: null });
  });

  it('a late event that sets a handed-over conversation back to pending does not hand it over again', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    abrirNoChat(conversa);
    await transferirSemResposta();
    const transferida = await s.conversaDoSuporte(conversa);
    expect(transferida).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    // an event of the platform setting it back to pending arrives after the hand-over; like the
    // documented 2022 payloads it carries no updated_at, and neither did the copies before it, so
    // nothing tells it from the platform's own later return to the robot: it applies in arrival
    // order (with the platform's times, a copy from before the hand-over keeps open: below)
    await s.registrar(sistema, { ...eventoDeConversa('conversation_status_changed', { conversa, status: 'pending' }), account: { id: CONTA, name: 'Conta' } });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending' });
    const outraVez = abrirNoChat(conversa);
    await transferirSemResposta();
    expect(outraVez.isDone()).toBe(false);
    expect((await s.conversaDoSuporte(conversa)).transferida_em).toBe(transferida.transferida_em);
    expect(registro.id).toBe(transferida.id);
  });

  it("the hand-over's open holds against copies of the conversation not newer than the one it was recorded over; the platform's next change applies", async () => {
    /** Chatwoot's `updated_at` of a conversation: unix seconds with microseconds. */
    const comTempo = <T extends { conversation: object }>(evento: T, atualizadaEm: number) => ({
      ...evento,
      conversation: { ...evento.conversation, updated_at: atualizadaEm },
    });
    const conversa = idDoSuporte();
    const contato = novoContato();
    const t1 = Date.now() / 1000 - 3600 + 0.123456;
    await s.registrar(sistema, comTempo(eventoDeMensagem({ conversa, contato, conta: CONTA, status: 'pending', criadaEm: segundosAtras(ESPERA_S + 30) }), t1));
    abrirNoChat(conversa);
    await transferirSemResposta();
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });

    // the contact's message event built before the hand-over, delivered after it: Chatwoot's message
    // events carry the conversation as it stood (pending, the same updated_at)
    const atrasada = comTempo(eventoDeMensagem({ conversa, contato, conta: CONTA, status: 'pending', conteudo: 'ainda aí?', criadaEm: segundosAtras(ESPERA_S) }), t1);
    expect(await s.registrar(sistema, atrasada)).toMatchObject({ mensagens_novas: 1 });
    // and a conversation event of that same copy
    await s.registrar(sistema, {
      ...eventoDeConversa('conversation_updated', { conversa, contato, status: 'pending' }),
      updated_at: t1,
      account: { id: CONTA, name: 'Conta' },
    });
    // the message is kept; only the status was the hand-over's
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', ultima_mensagem: 'ainda aí?', quantidade_mensagens: 2 });

    // the platform changes the conversation afterwards (the team gives it back to the robot): mirrored again
    await s.registrar(sistema, {
      ...eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'pending' }),
      updated_at: t1 + 60,
      account: { id: CONTA, name: 'Conta' },
    });
    expect((await s.conversaDoSuporte(conversa)).status).toBe('pending');
  });

  describe('a conversation with no platform time yet (its events carried no updated_at)', () => {
    /** The platform's copy of the conversation, stamped `atualizadaEm` (unix seconds). */
    const copia = (conversa: number, status: string, atualizadaEm: number) =>
      s.registrar(sistema, { ...eventoDeConversa('conversation_updated', { conversa, status }), updated_at: atualizadaEm, account: { id: CONTA, name: 'Conta' } });

    it("the hand-over's open holds against copies the platform stamped before it; a copy stamped after it applies", async () => {
      const { conversa } = await esperando({ esperaS: ESPERA_S + 30 });
      abrirNoChat(conversa);
      await transferirSemResposta();
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
      // a copy built before the hand-over, delivered after it
      await copia(conversa, 'pending', Date.now() / 1000 - 30);
      expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
      await copia(conversa, 'resolved', Date.now() / 1000 + 1);
      expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');
    });

    it('a refused hand-over marks nothing: the next copy applies', async () => {
      const { conversa } = await esperando({ esperaS: ESPERA_S + 30 });
      abrirNoChat(conversa, 500);
      await transferirSemResposta();
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
      await copia(conversa, 'snoozed', Date.now() / 1000 - 3600);
      expect((await s.conversaDoSuporte(conversa)).status).toBe('snoozed');
    });
  });

  describe('a wait is told apart by the platform\'s times alone: our clock and the platform\'s may disagree', () => {
    /** The platform's own event setting the conversation back to the robot. */
    const devolvidaAoRobo = (conversa: number) =>
      s.registrar(sistema, { ...eventoDeConversa('conversation_status_changed', { conversa, status: 'pending' }), account: { id: CONTA, name: 'Conta' } });

    it('platform behind our clock: a contact message written after the hand-over, though stamped before our transferida_em, starts a new wait', async () => {
      const { conversa } = await esperando({ esperaS: 3600 });
      abrirNoChat(conversa);
      await transferirSemResposta();
      const transferida = await s.conversaDoSuporte(conversa);
      expect(transferida).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
      // the team gave it back to the robot, and the contact wrote again; the platform's clock, some
      // minutes behind ours, stamps the message before the moment we wrote down for the hand-over
      await devolvidaAoRobo(conversa);
      await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', criadaEm: segundosAtras(ESPERA_S + 30) }));
      expect(Date.parse((await s.conversaDoSuporte(conversa)).ultima_mensagem_do_contato_em)).toBeLessThan(Date.parse(transferida.transferida_em));
      const outraVez = abrirNoChat(conversa);
      await transferirSemResposta();
      expect(outraVez.isDone()).toBe(true);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    });

    it('platform ahead of our clock: a message the hand-over already covered, stamped after our transferida_em, does not hand it over again', async () => {
      const { conversa } = await esperando({ esperaS: ESPERA_S + 30 });
      // the contact writes during the call; the platform's clock, minutes ahead, stamps it in our future
      abrirNoChat(conversa, 200, () =>
        s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', criadaEm: new Date(Date.now() + 5 * 60_000) })),
      );
      await transferirSemResposta();
      const transferida = await s.conversaDoSuporte(conversa);
      expect(transferida).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
      expect(Date.parse(transferida.ultima_mensagem_do_contato_em)).toBeGreaterThan(Date.parse(transferida.transferida_em));
      // a late event of the platform sets it back to pending; nothing new from the contact since
      await devolvidaAoRobo(conversa);
      const outraVez = abrirNoChat(conversa);
      await transferirSemResposta(new Date(Date.now() + 10 * 60_000));
      expect(outraVez.isDone()).toBe(false);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: transferida.transferida_em });
    });

    it("a hand-over recorded by a worker process whose clock runs ahead does not keep this one's later hand-over from being recorded", async () => {
      const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
      // an earlier wait, an hour ago, handed over by a process 10 minutes ahead: its transferida_em is in this one's future
      await banco('sales').query("UPDATE conversa SET transferida_em = ?, transferida_motivo = 'sem_resposta', transferida_contato_em = ? WHERE id = ?", {
        replacements: [new Date(Date.now() + 10 * 60_000), segundosAtras(3600), registro.id],
      });
      const chamada = abrirNoChat(conversa);
      await transferirSemResposta();
      expect(chamada.isDone()).toBe(true);
      const depois = await s.conversaDoSuporte(conversa);
      expect(depois).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
      expect(Date.parse(depois.transferida_em)).toBeLessThan(Date.now() + 60_000);
      // recorded as covering this wait: set back to the robot with nothing new from the contact, it is not called again
      await devolvidaAoRobo(conversa);
      const outraVez = abrirNoChat(conversa);
      await transferirSemResposta();
      expect(outraVez.isDone()).toBe(false);
    });

    it('a refusal counts for the wait it was for, by the platform\'s time: a new wait stamped before our refusal but after the refused one starts over', async () => {
      const { conversa, registro } = await esperando({ esperaS: 3600 });
      const recusa = abrirNoChat(conversa, 500);
      await transferirSemResposta();
      expect(recusa.isDone()).toBe(true);
      expect(await adiada(registro.id)).toMatchObject({ transferencia_falhas: 1 });
      // the robot answers and the contact writes again; the platform's clock, behind ours, stamps both before our refusal
      await s.registrar(
        sistema,
        eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', ...DO_ROBO, criadaEm: segundosAtras(ESPERA_S + 40) }),
      );
      await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', criadaEm: segundosAtras(ESPERA_S + 30) }));
      const novaEspera = abrirNoChat(conversa, 503);
      const t0 = new Date(Date.now() + 5_000);
      await transferirSemResposta(t0);
      // tried at once, not a minute after the earlier wait's refusal, and counted as its first refusal
      expect(novaEspera.isDone()).toBe(true);
      expect(await adiada(registro.id)).toEqual({ transferencia_falhas: 1, transferencia_tentar_apos: new Date(t0.getTime() + 60_000) });
    });
  });

  it('a redirect from the chat platform is not followed (the API token stays home) and hands nothing over', async () => {
    // real local servers: the chat platform's address answers 302 to another origin
    const noOutro: string[] = [];
    const outro = createServer((req, res) => {
      noOutro.push(`${req.method} ${req.headers.api_access_token ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ payload: { success: true, current_status: 'open' } }));
    });
    const chat = createServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${(outro.address() as AddressInfo).port}/login` }).end());
    await Promise.all([outro, chat].map((srv) => new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok))));
    try {
      const local = await s.criarSistema('suporte', { url: `http://127.0.0.1:${(chat.address() as AddressInfo).port}`, conta_id: CONTA, token_api: 'token-da-api' });
      const { conversa } = await esperando({ esperaS: ESPERA_S + 30, doSistema: local });
      const r = await transferirSemResposta();
      expect(r.falhas).toBeGreaterThanOrEqual(1);
      expect(noOutro).toEqual([]);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    } finally {
      await Promise.all([outro, chat].map((srv) => new Promise((ok) => srv.close(ok))));
    }
  });

  it('an error of the chat platform whose body never ends lets its connection go (lib/resposta.ts)', async () => {
    const abertas = new Set<unknown>();
    let chamadas = 0;
    const chat = createServer((req, res) => {
      chamadas++;
      abertas.add(req.socket);
      req.socket.once('close', () => abertas.delete(req.socket));
      res.writeHead(500, { 'content-type': 'application/json' }).write('{"error":"');
    });
    await new Promise<void>((ok) => chat.listen(0, '127.0.0.1', ok));
    try {
      const local = await s.criarSistema('suporte', { url: `http://127.0.0.1:${(chat.address() as AddressInfo).port}`, conta_id: CONTA, token_api: 'token-da-api' });
      const { conversa } = await esperando({ esperaS: ESPERA_S + 30, doSistema: local });
      expect((await transferirSemResposta()).falhas).toBeGreaterThanOrEqual(1);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
      expect(chamadas).toBeGreaterThan(0);
      await esperarAte(() => abertas.size === 0, "the unread answer's connection closed", 2000);
    } finally {
      chat.closeAllConnections();
      await new Promise((ok) => chat.close(ok));
    }
  });

  it('a 2xx that is not the platform saying the conversation is open (a login page, another status) hands nothing over', async () => {
    const pagina = await esperando({ esperaS: ESPERA_S + 30 });
    const outroStatus = await esperando({ esperaS: ESPERA_S + 30 });
    const chamadas = [
      nock(CHAT).post(`/api/v1/accounts/${CONTA}/conversations/${pagina.conversa}/toggle_status`).reply(200, '<html>Entrar</html>', { 'content-type': 'text/html' }),
      nock(CHAT)
        .post(`/api/v1/accounts/${CONTA}/conversations/${outroStatus.conversa}/toggle_status`)
        .reply(200, { payload: { success: true, current_status: 'snoozed' } }),
    ];
    await transferirSemResposta();
    for (const chamada of chamadas) expect(chamada.isDone()).toBe(true);
    for (const c of [pagina, outroStatus]) {
      expect(await s.conversaDoSuporte(c.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
      expect((await adiada(c.registro.id)).transferencia_falhas).toBe(1);
    }
  });

  it('a conversation pending here but not with the robot in the platform (resolved there, a status webhook lost or a PATCH) is not reopened: nothing changes here, and it is asked again later', async () => {
    // a system of its own: the earlier tests' waits, due by the second run and not yet tried, would go before it
    const proprio = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const resolvida = await esperando({ esperaS: ESPERA_S + 30, doSistema: proprio });
    statusNoChat.set(resolvida.conversa, 'resolved');
    const toggle = abrirNoChat(resolvida.conversa);
    await transferirSemResposta();
    expect(toggle.isDone()).toBe(false);
    expect(await s.conversaDoSuporte(resolvida.conversa)).toMatchObject({ status: 'pending', transferida_em: null, transferida_motivo: null });
    expect((await adiada(resolvida.registro.id)).transferencia_falhas).toBe(1);
    // given back to the robot there while the contact still waits: handed over once its wait is asked again
    statusNoChat.set(resolvida.conversa, 'pending');
    await transferirSemResposta(new Date(Date.now() + 61_000));
    expect(toggle.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(resolvida.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
  });

  it('a conversation the platform does not have (404) is not toggled nor counted against its system: the run goes on to the next ones, and it is asked again later', async () => {
    const proprio = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const perdidas = [];
    for (let i = 0; i < 4; i++) perdidas.push(await esperando({ esperaS: ESPERA_S + 50 - i, doSistema: proprio }));
    const nova = await esperando({ esperaS: ESPERA_S + 10, doSistema: proprio });
    for (const p of perdidas) statusNoChat.set(p.conversa, 404);
    const toggles = perdidas.map((p) => abrirNoChat(p.conversa));
    const aceite = abrirNoChat(nova.conversa);
    await transferirSemResposta();
    expect(toggles.map((t) => t.isDone())).toEqual([false, false, false, false]);
    // after four conversations the platform does not have, the fifth was still called
    expect(aceite.isDone()).toBe(true);
    for (const p of perdidas) {
      expect(await s.conversaDoSuporte(p.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
      expect((await adiada(p.registro.id)).transferencia_falhas).toBe(1);
    }
  });

  it('in a run, waits not tried yet go before those tried again: a backlog the platform keeps refusing, older, does not keep a new wait from the team', async () => {
    const proprio = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const recusadas = [];
    for (let i = 0; i < 3; i++) recusadas.push(await esperando({ esperaS: 3600 - i, doSistema: proprio }));
    // refused twice already, their back-off due
    await banco('sales').query(
      `UPDATE conversa SET transferencia_falhas = 2, transferencia_falhou_em = ?, transferencia_falhou_contato_em = ultima_mensagem_do_contato_em,
          transferencia_tentar_apos = ? WHERE id IN (?)`,
      { replacements: [segundosAtras(180), segundosAtras(60), recusadas.map((r) => r.registro.id)] },
    );
    const nova = await esperando({ esperaS: ESPERA_S + 10, doSistema: proprio });
    const ordem: number[] = [];
    nock(CHAT)
      .post(/toggle_status/)
      .times(4)
      .reply((uri) => {
        const conversa = Number(uri.split('/').at(-2));
        ordem.push(conversa);
        return conversa === nova.conversa ? [200, { payload: { success: true, current_status: 'open' } }] : [503, {}];
      });
    await transferirSemResposta();
    expect(ordem).toEqual([nova.conversa, ...recusadas.map((c) => c.conversa)]);
    expect(await s.conversaDoSuporte(nova.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    for (const c of recusadas) expect((await adiada(c.registro.id)).transferencia_falhas).toBe(3);
  });

  it(`a wait tried ${TENTATIVAS_POR_ESPERA} times (about a day) is given up; a new wait of the same conversation is tried again`, async () => {
    const { conversa, registro } = await esperando({ esperaS: 2 * 86_400 });
    const recusar = () => abrirNoChat(conversa, 503);
    await banco('sales').query(
      `UPDATE conversa SET transferencia_falhas = ?, transferencia_falhou_em = ?, transferencia_falhou_contato_em = ultima_mensagem_do_contato_em,
          transferencia_tentar_apos = ? WHERE id = ?`,
      { replacements: [TENTATIVAS_POR_ESPERA - 1, segundosAtras(3600), segundosAtras(1), registro.id] },
    );
    const ultima = recusar();
    await transferirSemResposta();
    expect(ultima.isDone()).toBe(true);
    expect((await adiada(registro.id)).transferencia_falhas).toBe(TENTATIVAS_POR_ESPERA);
    const depois = recusar();
    await transferirSemResposta(new Date(Date.now() + 7 * 86_400_000));
    expect(depois.isDone()).toBe(false);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });

    // the robot answers, and the contact writes again: a new wait
    await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', ...DO_ROBO, criadaEm: segundosAtras(ESPERA_S + 20) }));
    await s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', criadaEm: segundosAtras(ESPERA_S + 10) }));
    nock.removeInterceptor({ hostname: 'chat.exemplo.test', method: 'POST', path: `/api/v1/accounts/${CONTA}/conversations/${conversa}/toggle_status`, proto: 'https' });
    const aceite = abrirNoChat(conversa);
    await transferirSemResposta();
    expect(aceite.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
  });

  it('a back-off, counted from the refusal some way into its run, is tried by the run one interval later, not the one after', async () => {
    const proprio = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30, doSistema: proprio });
    // the run began a moment before this refusal
    const t0 = segundosAtras(2);
    abrirNoChat(conversa, 503);
    await transferirSemResposta(t0);
    const { transferencia_tentar_apos } = await adiada(registro.id);
    expect(transferencia_tentar_apos.getTime()).toBeGreaterThan(t0.getTime() + 60_000);
    const aceite = abrirNoChat(conversa);
    await transferirSemResposta(new Date(t0.getTime() + 60_000));
    expect(aceite.isDone()).toBe(true);
  });

  it("the platform's status decides: snoozed there, left alone; open there already, recorded without a call; not told (an agent bot's token refused the reading, no status in the answer), opened as before", async () => {
    const adiadaNoChat = await esperando({ esperaS: ESPERA_S + 50 });
    const jaAberta = await esperando({ esperaS: ESPERA_S + 40 });
    const botRecusado = await esperando({ esperaS: ESPERA_S + 30 });
    const semStatus = await esperando({ esperaS: ESPERA_S + 20 });
    statusNoChat.set(adiadaNoChat.conversa, 'snoozed');
    statusNoChat.set(jaAberta.conversa, 'open');
    statusNoChat.set(botRecusado.conversa, 401);
    statusNoChat.set(semStatus.conversa, null);
    const toggles = [adiadaNoChat, jaAberta, botRecusado, semStatus].map((c) => abrirNoChat(c.conversa));
    await transferirSemResposta();
    expect(toggles.map((t) => t.isDone())).toEqual([false, false, true, true]);
    expect(await s.conversaDoSuporte(adiadaNoChat.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    for (const c of [jaAberta, botRecusado, semStatus]) {
      expect(await s.conversaDoSuporte(c.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    }
  });

  it('a hand-over whose answer was lost is recorded when the platform then says the conversation is open; still pending there, it is tried again later', async () => {
    const aberta = await esperando({ esperaS: ESPERA_S + 40 });
    const recusada = await esperando({ esperaS: ESPERA_S + 30 });
    nock(CHAT)
      .post(`/api/v1/accounts/${CONTA}/conversations/${aberta.conversa}/toggle_status`)
      .reply(() => {
        statusNoChat.set(aberta.conversa, 'open');
        return [502, 'Bad Gateway'];
      });
    nock(CHAT).post(`/api/v1/accounts/${CONTA}/conversations/${recusada.conversa}/toggle_status`).replyWithError('socket hang up');
    await transferirSemResposta();
    expect(await s.conversaDoSuporte(aberta.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta', transferida_em: expect.any(String) });
    expect(await s.conversaDoSuporte(recusada.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    expect((await adiada(recusada.registro.id)).transferencia_falhas).toBe(1);
  });

  it('a robot answer that arrives while the run is under way keeps that conversation with the robot', async () => {
    const primeira = await esperando({ esperaS: ESPERA_S + 40 });
    const segunda = await esperando({ esperaS: ESPERA_S + 30 });
    // while the platform opens the first, the robot answers the second
    abrirNoChat(primeira.conversa, 200, () =>
      s.registrar(
        sistema,
        eventoDeMensagem({ conversa: segunda.conversa, conta: CONTA, status: 'pending', ...DO_ROBO }),
      ),
    );
    const segundaNoChat = abrirNoChat(segunda.conversa);
    await transferirSemResposta();
    expect(await s.conversaDoSuporte(primeira.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(segundaNoChat.isDone()).toBe(false);
    expect(await s.conversaDoSuporte(segunda.conversa)).toMatchObject({ status: 'pending', transferida_em: null });
  });

  it('a wait another run put off while this one was under way (its job taken over while slow) is not called in this run', async () => {
    const primeira = await esperando({ esperaS: ESPERA_S + 40 });
    const segunda = await esperando({ esperaS: ESPERA_S + 30 });
    // while the platform opens the first, the other run is refused the second and puts it off
    abrirNoChat(primeira.conversa, 200, () =>
      banco('sales').query(
        `UPDATE conversa SET transferencia_falhas = 1, transferencia_falhou_em = UTC_TIMESTAMP(3),
            transferencia_falhou_contato_em = ultima_mensagem_do_contato_em, transferencia_tentar_apos = UTC_TIMESTAMP(3) + INTERVAL 1 MINUTE
          WHERE id = ?`,
        { replacements: [segunda.registro.id] },
      ),
    );
    const segundaNoChat = abrirNoChat(segunda.conversa, 500);
    await transferirSemResposta();
    expect(await s.conversaDoSuporte(primeira.conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(segundaNoChat.isDone()).toBe(false);
    expect(await adiada(segunda.registro.id)).toMatchObject({ transferencia_falhas: 1 });
  });

  it('a hand-over the platform accepted is recorded even when the contact writes again during the call', async () => {
    const { conversa } = await esperando({ esperaS: ESPERA_S + 30 });
    abrirNoChat(conversa, 200, () => s.registrar(sistema, eventoDeMensagem({ conversa, conta: CONTA, status: 'pending', conteudo: 'alguém aí?' })));
    const antes = Date.now();
    await transferirSemResposta();
    const depois = await s.conversaDoSuporte(conversa);
    expect(depois).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(Date.parse(depois.transferida_em)).toBeGreaterThanOrEqual(antes - 5);
  });

  it('the hand-over is recorded even when the platform\'s own status webhook recorded open first', async () => {
    const { conversa } = await esperando({ esperaS: ESPERA_S + 30 });
    abrirNoChat(conversa, 200, async () => {
      await abertaNoChat(conversa);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_em: null });
    });
    const r = await transferirSemResposta();
    expect(r.transferidas).toBeGreaterThanOrEqual(1);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta', transferida_em: expect.any(String) });
  });

  it('a conversation handed over before, back with the robot, is handed over again: recorded anew even when the status webhook came first', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    // an hour ago it went to the team; since then it came back to the robot and the contact wrote again
    await banco('sales').query("UPDATE conversa SET transferida_em = ?, transferida_motivo = 'sem_resposta' WHERE id = ?", {
      replacements: [new Date(Date.now() - 3_600_000), registro.id],
    });
    abrirNoChat(conversa, 200, () => abertaNoChat(conversa));
    const antes = Date.now();
    await transferirSemResposta();
    const depois = await s.conversaDoSuporte(conversa);
    expect(depois).toMatchObject({ status: 'open', transferida_motivo: 'sem_resposta' });
    expect(Date.parse(depois.transferida_em)).toBeGreaterThanOrEqual(antes - 5);
  });

  it('a system without the chat platform\'s API token cannot hand over: the conversation stays pending', async () => {
    const semToken = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA });
    const { conversa } = await esperando({ esperaS: ESPERA_S + 30, doSistema: semToken });
    const comToken = await esperando({ esperaS: ESPERA_S + 30 });
    // any call for it, with a token header or without
    const chamada = nock(CHAT)
      .post(`/api/v1/accounts/${CONTA}/conversations/${conversa}/toggle_status`)
      .reply(200, { payload: { success: true, current_status: 'open' } });
    const outra = abrirNoChat(comToken.conversa);
    await transferirSemResposta();
    expect(chamada.isDone()).toBe(false);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
    // the same run got to the other system's conversation, due as much
    expect(outra.isDone()).toBe(true);
    expect(await s.conversaDoSuporte(comToken.conversa)).toMatchObject({ status: 'open' });
  });

  it('a system made inactive is not called', async () => {
    const inativo = await s.criarSistema('suporte', { url: CHAT, conta_id: CONTA, token_api: 'token-da-api' });
    const { conversa } = await esperando({ esperaS: ESPERA_S + 30, doSistema: inativo });
    await s.api.patch(`/config_system/${inativo.id}`, { token: await s.admin(), body: { ativo: false } });
    const chamada = abrirNoChat(conversa);
    await transferirSemResposta();
    expect(chamada.isDone()).toBe(false);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'pending', transferida_em: null });
  });

  it('a deleted conversation is not handed over', async () => {
    const { conversa, registro } = await esperando({ esperaS: ESPERA_S + 30 });
    await s.api.del(`/conversa/${registro.id}`, { token: await s.admin() });
    const chamada = abrirNoChat(conversa);
    await transferirSemResposta();
    expect(chamada.isDone()).toBe(false);
    const [[linha]] = (await banco('sales').query('SELECT status, transferida_em FROM conversa WHERE id = ?', { replacements: [registro.id] })) as any;
    expect(linha).toMatchObject({ status: 'pending', transferida_em: null });
  });

  it('runs one at a time across every worker process: once scheduled, the queue\'s global concurrency is 1', async () => {
    await agendarRepetiveis();
    expect(await fila(filaSalesTransferencia).getGlobalConcurrency()).toBe(1);
  });

  it('waits 5 minutes and runs every minute unless configured otherwise', () => {
    const padrao = loadConfig({}).sales;
    expect(padrao.transferenciaEsperaSegundos).toBe(300);
    expect(padrao.transferenciaIntervaloSegundos).toBe(60);
  });
});

test("the index the run reads by holds the waits alone: espera_do_contato_em is set exactly where SEM_RESPOSTA holds, whatever the robot's or the hand-over's times", async () => {
  const ids = [
    (await esperando({ esperaS: 3600 })).registro.id,
    (await esperando({ esperaS: 3600, roboRespondeu: true })).registro.id,
    (await esperando({ esperaS: 600 })).registro.id,
    (await esperando({ esperaS: 600 })).registro.id,
    (await esperando({ esperaS: 600 })).registro.id,
  ];
  const sales = banco('sales');
  // handed over for this message; handed over for an earlier one; answered by the robot before it
  await sales.query('UPDATE conversa SET transferida_contato_em = ultima_mensagem_do_contato_em WHERE id = ?', { replacements: [ids[2]] });
  await sales.query('UPDATE conversa SET transferida_contato_em = ultima_mensagem_do_contato_em - INTERVAL 1 MINUTE WHERE id = ?', { replacements: [ids[3]] });
  await sales.query('UPDATE conversa SET ultima_mensagem_do_robo_em = ultima_mensagem_do_contato_em - INTERVAL 1 SECOND WHERE id = ?', { replacements: [ids[4]] });
  const [linhas] = (await sales.query(
    `SELECT c.id, c.espera_do_contato_em IS NOT NULL AS no_indice, (${SEM_RESPOSTA}) AS sem_resposta FROM conversa c WHERE c.id IN (?)`,
    { replacements: [ids] },
  )) as [{ id: string; no_indice: number; sem_resposta: number }[], unknown];
  const porId = new Map(linhas.map((l) => [l.id, [Number(l.no_indice), Number(l.sem_resposta)]]));
  expect(ids.map((id) => porId.get(id))).toEqual([[1, 1], [0, 0], [0, 0], [1, 1], [1, 1]]);
});

describe('migration 0010: the hand-overs and refusals recorded before keep their decision', () => {
  it('a hand-over or refusal later than the contact\'s last message covers it; an earlier one leaves a new wait', async () => {
    const sales = banco('sales');
    const coberta = (await esperando({ esperaS: 3600 })).registro.id;
    const novaEspera = (await esperando({ esperaS: 3600 })).registro.id;
    const contatoEm = (id: string) => `(SELECT ultima_mensagem_do_contato_em FROM (SELECT * FROM conversa) x WHERE x.id = '${id}')`;
    // recorded by the old rule: after the contact's last message, and before it
    for (const [id, sinal] of [[coberta, '+'], [novaEspera, '-']]) {
      await sales.query(
        `UPDATE conversa SET transferida_em = ${contatoEm(id)} ${sinal} INTERVAL 1 MINUTE, transferencia_falhas = 2,
            transferencia_falhou_em = ${contatoEm(id)} ${sinal} INTERVAL 2 MINUTE WHERE id = ?`,
        { replacements: [id] },
      );
    }
    // the table as 0010 found it: before 0023's column, which reads the ones 0010 adds, and its index
    await sales.query('ALTER TABLE conversa DROP INDEX conversa_sem_resposta, DROP COLUMN espera_do_contato_em');
    await sales.query('ALTER TABLE conversa ADD KEY conversa_espera_do_sistema (config_system_suporte_id, status, deletado_em, ultima_mensagem_do_contato_em)');
    await sales.query('ALTER TABLE conversa DROP COLUMN transferida_contato_em, DROP COLUMN transferencia_falhou_contato_em');
    await MIGRACOES_SALES.find((m) => m.name === '0010-sales-espera-pelo-relogio-do-suporte')!.up(sales.getQueryInterface());
    await MIGRACOES_SALES.find((m) => m.name === '0023-sales-espera-sem-resposta')!.up(sales.getQueryInterface());
    const [linhas] = (await sales.query(
      `SELECT id, transferida_contato_em >= ultima_mensagem_do_contato_em AS transferida_cobre,
          transferencia_falhou_contato_em >= ultima_mensagem_do_contato_em AS recusa_cobre
         FROM conversa WHERE id IN (?)`,
      { replacements: [[coberta, novaEspera]] },
    )) as any;
    const porId = Object.fromEntries(linhas.map((l: any) => [l.id, { transferida: Number(l.transferida_cobre), recusa: Number(l.recusa_cobre) }]));
    expect(porId).toEqual({ [coberta]: { transferida: 1, recusa: 1 }, [novaEspera]: { transferida: 0, recusa: 0 } });
  });

  it('stopped after adding the columns, before filling them, it runs again to its end', async () => {
    const sales = banco('sales');
    const { id } = (await esperando({ esperaS: 3600 })).registro;
    await sales.query('UPDATE conversa SET transferida_em = ultima_mensagem_do_contato_em + INTERVAL 1 MINUTE WHERE id = ?', { replacements: [id] });
    // the columns are there (one statement added both), the earlier records not yet filled in
    await sales.query('UPDATE conversa SET transferida_contato_em = NULL, transferencia_falhou_contato_em = NULL');
    await MIGRACOES_SALES.find((m) => m.name === '0010-sales-espera-pelo-relogio-do-suporte')!.up(sales.getQueryInterface());
    const [[linha]] = (await sales.query('SELECT transferida_contato_em = ultima_mensagem_do_contato_em AS coberta FROM conversa WHERE id = ?', {
      replacements: [id],
    })) as any;
    expect(Number(linha.coberta)).toBe(1);
  });
});
