import { randomInt } from 'node:crypto';
import { chaveDoTelefone } from '../../api/sales/telefone';
import { novaConexao } from '../../lib/database';
import { Conversa, ConversaMensagem } from '../../models/sales';
import { esperarOutraConexao } from '../helpers/espera';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { eventoDeConversa, eventoDeMensagem, eventoDoGateway, idDeMensagem, idDoSuporte, novoContato, Sales, salesDe } from './apoio';

/**
 * Webhooks and routes of one conversation at the same time: requests run in parallel, and where
 * an order must be forced, another connection holds the transaction the other writer would.
 */

let suite: SuiteDeTeste;
let s: Sales;
let suporte: { id: string; token: string };
let gateway: { id: string; token: string };
let mensageiro: { id: string; token: string };
const NUMERO_DO_MENSAGEIRO = '+55 11 97777-6666';

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales'], { workers: false });
  s = salesDe(suite);
  suporte = await s.criarSistema('suporte', { url: 'https://chat.exemplo.test', conta_id: 1 });
  gateway = await s.criarSistema('gateway');
  mensageiro = await s.criarSistema('mensageiro', { numero: NUMERO_DO_MENSAGEIRO });
});

afterAll(() => suite?.encerrar());

const novoTelefone = () => `+55 11 9${randomInt(1000, 9999)}-${randomInt(1000, 9999)}`;

/** Resolves with the promise's value, or with `'esperando'` once `bloqueado` says it is blocked. */
async function ateTerminarOuBloquear<T>(p: Promise<T>, bloqueado: Promise<unknown>): Promise<T | 'esperando'> {
  return Promise.race([p, bloqueado.then(() => 'esperando' as const)]);
}

describe("DESIGN §7: the gateway's first message of a phone and the chat platform's new conversation, at the same time", () => {
  it('a conversation created while the gateway is linking its phone starts linked', async () => {
    const telefone = novoTelefone();
    const chave = chaveDoTelefone(telefone);
    const outro = await novaConexao('sales');
    let conversa: number;
    try {
      // the gateway's link under way, as guardarVinculo writes it, not yet committed
      await outro.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await outro.beginTransaction();
      await outro.query(
        `INSERT INTO contato_gateway (telefone_chave, config_system_gateway_id, config_system_mensageiro_id, atualizado_em) VALUES (?, ?, ?, NOW(3))`,
        [chave, gateway.id, mensageiro.id],
      );
      // the chat platform's conversation of that phone arrives meanwhile
      conversa = idDoSuporte();
      const webhook = s.webhook(suporte, eventoDeConversa('conversation_created', { conversa, contato: novoContato({ telefone }) }));
      await ateTerminarOuBloquear(webhook, esperarOutraConexao(outro, 'the webhook waiting on the link', ['%INSERT INTO conversa %']));
      await outro.commit();
      expect((await webhook).status).toBe(200);
    } finally {
      await outro.end();
    }
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({
      contato_telefone: telefone,
      config_system_gateway_id: gateway.id,
      config_system_mensageiro_id: mensageiro.id,
    });
  });

  it("the gateway's event arriving while a chat webhook writes the phone's new conversation links it, once that write commits", async () => {
    const telefone = novoTelefone();
    const conversa = idDoSuporte();
    const outro = await novaConexao('sales');
    try {
      // the chat webhook's write under way: it read no link for the phone (there was none) and
      // created the conversation without one, not yet committed
      await outro.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await outro.beginTransaction();
      await outro.query(
        `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, contato_nome, contato_telefone, contato_telefone_digitos,
           status, ultima_mensagem, criado_em, atualizado_em) VALUES (UUID(), ?, ?, 'Contato', ?, ?, 'pending', '', NOW(3), NOW(3))`,
        [suporte.id, conversa, telefone, telefone.replace(/\D/g, '')],
      );
      const evento = s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO));
      await ateTerminarOuBloquear(evento, esperarOutraConexao(outro, "the gateway's event waiting on the conversation", ['%FROM conversa %FOR UPDATE%']));
      await outro.commit();
      expect((await evento).status).toBe(200);
      expect((await evento).body).toEqual({ conversas_vinculadas: 1 });
    } finally {
      await outro.end();
    }
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: mensageiro.id });
  });

  it('both webhooks sent together, many times: every conversation ends linked', async () => {
    const rodadas = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const telefone = novoTelefone();
        const conversa = idDoSuporte();
        const [chat, gw] = await Promise.all([
          s.webhook(suporte, eventoDeMensagem({ conversa, contato: novoContato({ telefone }) })),
          s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO)),
        ]);
        expect([chat.status, gw.status]).toEqual([200, 200]);
        return conversa;
      }),
    );
    for (const conversa of rodadas) {
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id });
    }
  });
});

describe('DESIGN §7: events of one conversation at the same time', () => {
  it('conversation_created, a status change and messages arriving together make one record, every message counted once', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const mensagens = Array.from({ length: 6 }, (_, i) => ({ id: idDeMensagem(), criadaEm: new Date(base + i * 1000) }));
    const eventos = [
      eventoDeConversa('conversation_created', { conversa, contato }),
      eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }),
      ...mensagens.map((m, i) =>
        eventoDeMensagem({ conversa, contato, mensagem: m.id, criadaEm: m.criadaEm, conteudo: `m${i}`, tipo: i % 2 ? 'outgoing' : 'incoming', remetente: i % 2 ? { id: 5, type: 'agent_bot' } : undefined }),
      ),
    ];
    // each delivered twice, all at once
    const respostas = await Promise.all([...eventos, ...eventos].map((e) => s.webhook(suporte, e)));
    expect(respostas.every((r) => r.status === 200)).toBe(true);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(1);
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({
      quantidade_mensagens: 6,
      ultima_mensagem: 'm5',
      ultima_mensagem_em: mensagens[5].criadaEm.toISOString(),
      ultima_mensagem_do_contato_em: mensagens[4].criadaEm.toISOString(),
      ultima_mensagem_do_robo_em: mensagens[5].criadaEm.toISOString(),
    });
    expect(await ConversaMensagem.count({ where: { conversa_id: c.id } })).toBe(6);
  });
});

/**
 * Another API process: its own group-commit writer (registro.ts keeps one per process), over the
 * same database. Two of them write one conversation's events in two transactions at once.
 */
function outroProcesso(): typeof import('../../api/sales/registro') {
  const compartilhados = [
    '../../lib/database', '../../lib/logger', '../../lib/lotes', '../../models/sales', '../../models/shared/base', '../../api/sales/anexos',
    '../../api/sales/busca-de-texto', '../../api/sales/config-system', '../../api/sales/robos', '../../api/shared/errors', '../../api/sales/suporte',
    '../../api/sales/telefone',
  ].map((caminho) => [caminho, require(caminho)] as const);
  let registro: typeof import('../../api/sales/registro') | undefined;
  jest.isolateModules(() => {
    for (const [caminho, modulo] of compartilhados) jest.doMock(caminho, () => modulo);
    registro = require('../../api/sales/registro');
  });
  return registro!;
}

describe('DESIGN §7: two API processes writing one conversation at once', () => {
  const processos = () => [require('../../api/sales/registro'), outroProcesso()] as (typeof import('../../api/sales/registro'))[];
  const sistema = () => ({ id: suporte.id, tipo: 'suporte' as const, url: 'https://chat.exemplo.test', contaId: 1, tokenHash: Buffer.alloc(0), segredoHmac: null });
  const { lerEventoDoSuporte } = require('../../api/sales/suporte') as typeof import('../../api/sales/suporte');

  it('messages of one conversation split between them: one record, each counted once, the latest last', async () => {
    const [a, b] = processos();
    for (let rodada = 0; rodada < 8; rodada++) {
      const conversa = idDoSuporte();
      const contato = novoContato();
      const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
      const ms = Array.from({ length: 6 }, (_, i) => ({ id: idDeMensagem(), criadaEm: new Date(base + i * 1000) }));
      const evento = (i: number, como: 'message_created' | 'message_updated' = 'message_created') =>
        lerEventoDoSuporte(eventoDeMensagem({ conversa, contato, mensagem: ms[i].id, criadaEm: ms[i].criadaEm, conteudo: `m${i}`, evento: como,
          tipo: i % 2 ? 'outgoing' : 'incoming', remetente: i % 2 ? { id: 5, type: 'agent_bot' } : undefined }));
      const criacao = lerEventoDoSuporte(eventoDeConversa('conversation_created', { conversa, contato }));
      const resultados = await Promise.all([
        a.registrarEventoDoSuporte(sistema(), criacao),
        b.registrarEventoDoSuporte(sistema(), criacao),
        ...ms.flatMap((_, i) => [a.registrarEventoDoSuporte(sistema(), evento(i)), b.registrarEventoDoSuporte(sistema(), evento(i, i === 5 ? 'message_updated' : 'message_created'))]),
      ]);
      expect(new Set(resultados.map((r) => r.conversa_id)).size).toBe(1);
      expect(resultados.reduce((n, r) => n + r.mensagens_novas, 0)).toBe(6);
      expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(1);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({
        quantidade_mensagens: 6,
        ultima_mensagem: 'm5',
        ultima_mensagem_em: ms[5].criadaEm.toISOString(),
        ultima_mensagem_do_contato_em: ms[4].criadaEm.toISOString(),
        ultima_mensagem_do_robo_em: ms[5].criadaEm.toISOString(),
      });
    }
  });
});

describe('SPEC §3: DELETE /conversa/{id} racing webhooks of that conversation', () => {
  it('whatever the order, at most one live record, whose counters match its messages, and nothing of the deleted history', async () => {
    const casos = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const conversa = idDoSuporte();
        const contato = novoContato();
        const antiga = idDeMensagem();
        const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
        const primeiro = await s.registrar(suporte, eventoDeMensagem({ conversa, contato, mensagem: antiga, conteudo: 'antiga', criadaEm: new Date(base) }));
        const nova = idDeMensagem();
        const respostas = await Promise.all([
          s.api.del(`/conversa/${primeiro.conversa_id}`, { token: await s.admin() }),
          s.webhook(suporte, eventoDeMensagem({ conversa, contato, mensagem: nova, conteudo: 'nova', criadaEm: new Date(base + 1000) })),
          s.webhook(suporte, eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' })),
          s.webhook(suporte, eventoDeMensagem({ conversa, contato, mensagem: antiga, conteudo: 'antiga editada', criadaEm: new Date(base), evento: 'message_updated' })),
        ]);
        expect(respostas.map((r) => r.status)).toEqual([204, 200, 200, 200]);
        const depois = () =>
          s.webhook(suporte, eventoDeMensagem({ conversa, contato, mensagem: idDeMensagem(), conteudo: 'depois', criadaEm: new Date(base + 2000) }));
        return { conversa, deletada: primeiro.conversa_id as string, depois };
      }),
    );
    for (const { conversa, deletada, depois } of casos) {
      const vivas = await Conversa.findAll({ where: { suporte_conversa_id: conversa } });
      expect(vivas.length).toBeLessThanOrEqual(1);
      expect(await ConversaMensagem.count({ where: { conversa_id: deletada } })).toBe(0);
      // a later message: it joins the record the race left, or starts one where the delete took
      // everything, so every case ends with exactly one record to check
      expect((await depois()).status).toBe(200);
      const agora = await Conversa.findAll({ where: { suporte_conversa_id: conversa } });
      expect(agora).toHaveLength(1);
      const esperadas = vivas.length ? ['nova', 'depois'] : ['depois'];
      const mensagens = await ConversaMensagem.findAll({ where: { conversa_id: agora[0].id }, order: [['criada_em', 'ASC']] });
      expect(agora[0].id).toEqual(vivas.length ? vivas[0].id : expect.any(String));
      expect(agora[0].id).not.toBe(deletada);
      expect(mensagens.map((m) => m.conteudo)).toEqual(esperadas);
      expect(agora[0].quantidade_mensagens).toBe(esperadas.length);
      expect(agora[0].ultima_mensagem).toBe('depois');
    }
  });
});

describe('SPEC 4.6 rule 6: PATCH /conversa/{id} racing the webhooks', () => {
  it('the customer and robot it links stay linked, whatever webhooks come at the same time', async () => {
    const cliente = await s.criar('cliente', { razao_social: 'Cliente concorrente' });
    const robo = await s.criar('robo', { nome: 'Robô concorrente', suporte_bot_id: randomInt(1e6, 2e6) });
    const outroRobo = await s.criar('robo', { nome: 'Outro robô', suporte_bot_id: randomInt(2e6, 3e6) });
    const conversa = idDoSuporte();
    const contato = novoContato();
    const { conversa_id } = await s.registrar(suporte, eventoDeMensagem({ conversa, contato }));
    const token = await s.admin();
    const respostas = await Promise.all([
      s.api.patch(`/conversa/${conversa_id}`, { token, body: { cliente_id: cliente.id, robo_id: robo.id } }),
      ...Array.from({ length: 6 }, (_, i) =>
        s.webhook(suporte, eventoDeMensagem({ conversa, contato, tipo: 'outgoing', remetente: { id: outroRobo.suporte_bot_id, type: 'agent_bot' }, status: i % 2 ? 'open' : 'pending' })),
      ),
    ]);
    expect(respostas.map((r) => r.status)).toEqual(Array(7).fill(200));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ cliente_id: cliente.id, robo_id: robo.id, quantidade_mensagens: 7 });
  });
});

describe('SPEC §3: after DELETE, the new message\'s message_updated arriving before its message_created', () => {
  it('is that new message: it starts the new record with its edited text, and the late message_created changes nothing', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const primeiro = await s.registrar(suporte, eventoDeMensagem({ conversa, contato, conteudo: 'antiga' }));
    expect((await s.api.del(`/conversa/${primeiro.conversa_id}`, { token: await s.admin() })).status).toBe(204);
    const nova = idDeMensagem();
    const criada = eventoDeMensagem({ conversa, contato, mensagem: nova, conteudo: 'nova' });
    const editada = { ...criada, event: 'message_updated', content: 'nova, editada' };
    const r = await s.registrar(suporte, editada);
    expect(r).toEqual({ conversa_id: expect.any(String), mensagens_novas: 1 });
    expect(await s.registrar(suporte, criada)).toEqual({ conversa_id: r.conversa_id, mensagens_novas: 0 });
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ id: r.conversa_id, quantidade_mensagens: 1, ultima_mensagem: 'nova, editada' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['nova, editada']);
  });
});
