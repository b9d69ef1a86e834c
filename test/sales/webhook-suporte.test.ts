import { format } from 'mysql2';
import { autenticarWebhook, conferirAssinaturaDoWebhook, TOLERANCIA_DO_CARIMBO_S } from '../../api/sales/config-system';
import * as registro from '../../api/sales/registro';
import { pesoDoEvento, registrarEventoDoSuporte } from '../../api/sales/registro';
import { config } from '../../config';
import { ANEXOS_POR_MENSAGEM, lerEventoDoSuporte, MENSAGENS_POR_EVENTO } from '../../api/sales/suporte';
import { entregaAssinada, receberEventoDoSuporte } from '../../api/sales/webhook-suporte';
import { banco, novaConexao } from '../../lib/database';
import { dormir, esperarTravaEsperada } from '../helpers/espera';
import { MENSAGEM_MAXIMA } from '../../lib/lotes';
import { PRAZO_DO_ANDAMENTO_MS, redis } from '../../lib/redis';
import { Conversa, ConversaMensagem } from '../../models/sales';
import { esperarProblema } from '../helpers/http';
import type { Registro } from '../helpers/registros';
import { ateOFim, compilado, emProcesso } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import {
  assinaturaDoChatwoot,
  CAMPOS_DA_CONVERSA,
  eventoDeConversa,
  eventoDeMensagem,
  fixture,
  idDeMensagem,
  idDoSuporte,
  mensagemAninhada,
  novoContato,
  RFC3339,
  Sales,
  salesDe,
} from './apoio';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('sales-webhook', ['warn'], () => mockRegistros));

let suite: SuiteDeTeste;
let s: Sales;
let sistema: { id: string; token: string };

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales', 'files']);
  s = salesDe(suite);
  sistema = await s.criarSistema('suporte', { url: 'https://chat.exemplo.test', conta_id: 1 });
});

afterAll(() => suite?.encerrar());

describe('DESIGN §7: a message_created webhook records the conversation and the message', () => {
  it('creates the conversation with every SPEC §2 field and stores the message in GET /conversa/{id}/mensagens', async () => {
    const contato = novoContato({ telefone: '+55 (11) 98765-4321' });
    const conversa = idDoSuporte();
    const criadaEm = new Date('2026-11-20T10:00:00.000Z');
    const evento = eventoDeMensagem({ conversa, contato, conteudo: 'Olá, quero um orçamento', criadaEm, conta: 1 });
    const r = await s.registrar(sistema, evento);
    expect(r).toEqual({ conversa_id: expect.any(String), mensagens_novas: 1 });

    const c = await s.conversaDoSuporte(conversa);
    expect(Object.keys(c).sort()).toEqual(CAMPOS_DA_CONVERSA);
    expect(c).toMatchObject({
      id: r.conversa_id,
      suporte_conversa_id: conversa,
      suporte_contato_id: contato.id,
      suporte_endereco_conversa: `https://chat.exemplo.test/app/accounts/1/conversations/${conversa}`,
      config_system_suporte_id: sistema.id,
      contato_nome: contato.nome,
      contato_telefone: '+55 (11) 98765-4321',
      status: 'pending',
      ultima_mensagem: 'Olá, quero um orçamento',
      ultima_mensagem_em: '2026-11-20T10:00:00.000Z',
      ultima_mensagem_do_contato_em: '2026-11-20T10:00:00.000Z',
      ultima_mensagem_do_robo_em: null,
      quantidade_mensagens: 1,
      transferida_em: null,
      transferida_motivo: null,
      cliente_id: null,
      robo_id: null,
    });
    expect(c.criado_em).toMatch(RFC3339);
    expect(c.atualizado_em).toMatch(RFC3339);

    const mensagens = await s.mensagens(c.id);
    expect(mensagens).toEqual([
      {
        id: expect.any(String),
        conversa_id: c.id,
        suporte_mensagem_id: evento.id,
        autor: 'contato',
        conteudo: 'Olá, quero um orçamento',
        etapa_id: null,
        criada_em: '2026-11-20T10:00:00.000Z',
        quantidade_anexos: 0,
        anexos: [],
      },
    ]);
  });

  it('a webhook address with the system id in capitals names the same system', async () => {
    const res = await s.webhook({ ...sistema, id: sistema.id.toUpperCase() }, eventoDeMensagem({ conversa: idDoSuporte() }));
    expect(res.status).toBe(200);
  });

  it('takes the documented Chatwoot sample as it is', async () => {
    const amostra = fixture('chatwoot', 'docs-2022_message_created.json');
    const r = await s.registrar(sistema, amostra);
    // an incoming text message: stored once
    expect(r.mensagens_novas).toBe(1);
    const c = await s.conversaDoSuporte(amostra.conversation.id);
    expect(c).toMatchObject({ suporte_conversa_id: 10, status: 'open', contato_nome: 'little-haze-776', contato_telefone: '' });
  });

  it("takes the other documented samples as they are: the API channel's (every id 0, no meta, no `private`), the update of the sample's message, a status change without `account`", async () => {
    const api = await s.registrar(sistema, fixture('chatwoot', 'docs-2020_api-channel_message_created.json'));
    expect(api.mensagens_novas).toBe(1);
    expect(await s.conversaDoSuporte(0)).toMatchObject({ suporte_conversa_id: 0, status: 'open', contato_nome: 'contact-name', quantidade_mensagens: 1 });
    expect((await s.mensagens(api.conversa_id)).map((m: any) => [m.conteudo, m.autor])).toEqual([['This is a incoming message from API Channel', 'contato']]);

    // the sample's message 118 of conversation 10 (recorded here, or already by the test above), edited: no new message
    await s.registrar(sistema, fixture('chatwoot', 'docs-2022_message_created.json'));
    const editada = await s.registrar(sistema, fixture('chatwoot', 'docs-2022_message_updated.json'));
    expect(editada).toMatchObject({ mensagens_novas: 0 });
    const dez = await s.conversaDoSuporte(10);
    expect(dez.quantidade_mensagens).toBe(1);
    // its copy of the conversation carries the inbox's template message (type 3, no sender), which the contact sees
    expect(await s.webhook(sistema, fixture('chatwoot', 'docs-2022_conversation_status_changed.json'))).toMatchObject({ status: 200 });
    expect(await s.conversaDoSuporte(10)).toMatchObject({ status: 'open', quantidade_mensagens: 2 });
    expect((await s.mensagens(dez.id)).map((m: any) => [m.conteudo, m.autor])).toEqual([
      ['hi', 'contato'],
      ['Get notified by email', 'robo'],
    ]);
  });

  it('stores a repeated webhook once: same answer id, no new message, counters unchanged', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa });
    const primeiro = await s.registrar(sistema, evento);
    const segundo = await s.registrar(sistema, evento);
    expect(segundo).toEqual({ conversa_id: primeiro.conversa_id, mensagens_novas: 0 });
    expect((await s.conversaDoSuporte(conversa)).quantidade_mensagens).toBe(1);
    expect(await ConversaMensagem.count({ where: { conversa_id: primeiro.conversa_id } })).toBe(1);
  });

  it("a repeated webhook leaves the conversation's atualizado_em as it was; a change the platform sends moves it", async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const evento = eventoDeMensagem({ conversa, contato });
    const { conversa_id } = await s.registrar(sistema, evento);
    const atualizadoEm = async () => {
      const [[linha]] = (await banco('sales').query('SELECT atualizado_em FROM conversa WHERE id = ?', { replacements: [conversa_id] })) as any;
      return (linha.atualizado_em as Date).getTime();
    };
    const antes = await atualizadoEm();
    await dormir(20);
    await s.registrar(sistema, evento);
    await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa, contato }));
    // a newer copy of the conversation that changes nothing kept here (its assignee, say)
    await s.registrar(sistema, { ...eventoDeConversa('conversation_updated', { conversa, contato }), updated_at: new Date().toISOString() });
    expect(await atualizadoEm()).toBe(antes);
    await s.registrar(sistema, eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }));
    const aberta = await atualizadoEm();
    expect(aberta).toBeGreaterThan(antes);
    // a name changed only in case is a change, though the collation compares it equal
    await dormir(20);
    await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa, contato: { ...contato, nome: contato.nome.toUpperCase() }, status: 'open' }));
    const renomeada = await atualizadoEm();
    expect(renomeada).toBeGreaterThan(aberta);
    // an edit of the last message changes its ultima_mensagem: a change of the record too
    await dormir(20);
    // the message as the platform now sends it: its conversation as last applied (open, renamed)
    const atual = eventoDeMensagem({ conversa, contato: { ...contato, nome: contato.nome.toUpperCase() }, status: 'open', mensagem: evento.id });
    const editada = { ...atual, created_at: evento.created_at, event: 'message_updated', content: 'texto editado' };
    await s.registrar(sistema, editada);
    expect((await s.conversaDoSuporte(conversa)).ultima_mensagem).toBe('texto editado');
    const aposEdicao = await atualizadoEm();
    expect(aposEdicao).toBeGreaterThan(renomeada);
    await dormir(20);
    await s.registrar(sistema, editada);
    expect(await atualizadoEm()).toBe(aposEdicao);
  });

  it('stores the same message once when the webhook arrives twice at the same instant', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa });
    const respostas = await Promise.all([s.webhook(sistema, evento), s.webhook(sistema, evento), s.webhook(sistema, evento)]);
    expect(respostas.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(respostas.map((r) => r.body.mensagens_novas).sort()).toEqual([0, 0, 1]);
    const c = await s.conversaDoSuporte(conversa);
    expect(c.quantidade_mensagens).toBe(1);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(1);
  });

  it('never stores a private note, nor an activity line', async () => {
    const conversa = idDoSuporte();
    await s.registrar(sistema, eventoDeMensagem({ conversa, conteudo: 'visível' }));
    const nota = fixture('constructed', 'chatwoot_message_created_private_note.json');
    const r = await s.registrar(sistema, { ...nota, conversation: { ...nota.conversation, id: conversa, status: 'open' } });
    expect(r.mensagens_novas).toBe(0);
    await s.registrar(sistema, eventoDeMensagem({ conversa, tipo: 'activity', conteudo: 'Conversa resolvida por Ana', remetente: { id: null, type: null } }));
    const c = await s.conversaDoSuporte(conversa);
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['visível']);
    expect(c.quantidade_mensagens).toBe(1);
    expect(c.ultima_mensagem).toBe('visível');
  });
});

describe('message times and types in every form the platform may send', () => {
  it('a time past 9999-12-31 in UTC (an ISO date with an offset) answers 400 naming created_at, and stores nothing', async () => {
    const conversa = idDoSuporte();
    const evento = { ...eventoDeMensagem({ conversa }), created_at: '9999-12-31T23:59:59-14:00' };
    const p = esperarProblema(await s.webhook(sistema, evento), 400);
    expect(p.errors).toEqual([{ campo: 'created_at', mensagem: expect.stringContaining('entre os anos 1000 e 9999') }]);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
    // the last second a date column holds is taken, brought back to ten minutes ahead of the
    // server's clock: kept, it would stay the conversation's last message for good
    const antes = Date.now();
    const ultimo = { ...eventoDeMensagem({ conversa, conteudo: 'do ano 9999' }), created_at: '9999-12-31T23:59:59Z' };
    expect((await s.registrar(sistema, ultimo)).mensagens_novas).toBe(1);
    const c = await s.conversaDoSuporte(conversa);
    const [guardada] = await s.mensagens(c.id);
    expect(guardada.conteudo).toBe('do ano 9999');
    expect(Date.parse(guardada.criada_em)).toBeGreaterThanOrEqual(Math.floor((antes + 10 * 60_000) / 1000) * 1000);
    expect(Date.parse(guardada.criada_em)).toBeLessThanOrEqual(Date.now() + 10 * 60_000);
    expect(c.ultima_mensagem_em).toBe(guardada.criada_em);
  });

  it('an ISO created_at without an offset is UTC, whatever the zone of the host', async () => {
    const eventos = ['2025-06-10T14:02:11', '2025-06-10 14:02:11', '+002025-06-10T14:02:11'].map((created_at) => ({ ...eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'sem fuso' }), created_at }));
    // read in a process of a host three hours behind UTC, where Date.parse takes such a date for 17:02 UTC
    const codigo = `const { lerEventoDoSuporte } = require(${JSON.stringify(compilado('api/sales/suporte.js'))});
      const lidas = JSON.parse(process.env.EVENTOS).map((e) => lerEventoDoSuporte(e).mensagem.criadaEm.toISOString());
      console.log(JSON.stringify({ local: new Date('2025-06-10T14:02:11').toISOString(), lidas }));`;
    const { codigo: saida, saida: texto, erros } = await ateOFim(emProcesso(['-e', codigo], { ...process.env, TZ: 'America/Sao_Paulo', EVENTOS: JSON.stringify(eventos) }));
    expect({ saida, erros }).toEqual({ saida: 0, erros: '' });
    expect(JSON.parse(texto)).toEqual({ local: '2025-06-10T17:02:11.000Z', lidas: ['2025-06-10T14:02:11.000Z', '2025-06-10T14:02:11.000Z', '2025-06-10T14:02:11.000Z'] });
  });

  it("a platform clock near the bound keeps its messages' order: one nine minutes ahead, then one eleven minutes ahead (brought back to ten), the second is the last", async () => {
    const conversa = idDoSuporte();
    const antes = Date.now();
    await s.registrar(sistema, eventoDeMensagem({ conversa, conteudo: 'nove minutos adiante', criadaEm: new Date(antes + 9 * 60_000) }));
    await s.registrar(sistema, eventoDeMensagem({ conversa, conteudo: 'onze minutos adiante', criadaEm: new Date(antes + 11 * 60_000) }));
    const depois = Date.now();
    const c = await s.conversaDoSuporte(conversa);
    expect(c.ultima_mensagem).toBe('onze minutos adiante');
    const [nove, onze] = await s.mensagens(c.id);
    expect([nove.conteudo, onze.conteudo]).toEqual(['nove minutos adiante', 'onze minutos adiante']);
    expect(Date.parse(onze.criada_em)).toBeGreaterThanOrEqual(Math.floor((antes + 10 * 60_000) / 1000) * 1000);
    expect(Date.parse(onze.criada_em)).toBeLessThanOrEqual(depois + 10 * 60_000);
  });

  it('a message_type sent as a number in text ("0", "1") is that type: the message is stored', async () => {
    const conversa = idDoSuporte();
    const entrada = { ...eventoDeMensagem({ conversa }), message_type: '0' };
    expect((await s.registrar(sistema, entrada)).mensagens_novas).toBe(1);
    const saida = { ...eventoDeMensagem({ conversa, tipo: 'outgoing' }), message_type: '1' };
    expect((await s.registrar(sistema, saida)).mensagens_novas).toBe(1);
    const nota = { ...eventoDeMensagem({ conversa }), message_type: '2' };
    expect((await s.registrar(sistema, nota)).mensagens_novas).toBe(0);
  });
});

describe('DESIGN §10: autor comes from the sender', () => {
  it('contact → contato; team member → atendente; agent bot → robo; a robot\'s chat user → robo, linking that robot', async () => {
    const usuarioDoRobo = idDoSuporte();
    const roboUsuario = await s.criar('robo', { nome: 'Robô de vendas', suporte_usuario_id: usuarioDoRobo });
    const idDoBot = idDoSuporte();
    await s.criar('robo', { nome: 'Robô bot', suporte_bot_id: idDoBot });
    const conversa = idDoSuporte();
    const contato = novoContato();
    const t0 = Date.parse('2026-11-21T12:00:00.000Z');
    const em = (i: number) => new Date(t0 + i * 1000);
    const enviar = (i: number, conteudo: string, remetente?: { id: number; type: 'user' | 'agent_bot' }, etapa?: string) =>
      s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo, criadaEm: em(i), etapa, ...(remetente ? { tipo: 'outgoing', remetente } : {}) }));
    await enviar(0, 'c');
    await enviar(1, 'a', { id: 42, type: 'user' });
    // a team member whose user id happens to equal the bot's id is still a team member
    await enviar(2, 'a2', { id: idDoBot, type: 'user' });
    await enviar(3, 'r', { id: usuarioDoRobo, type: 'user' }, 'etapa-2');
    await enviar(4, 'b', { id: idDoBot, type: 'agent_bot' });
    const c = await s.conversaDoSuporte(conversa);
    const mensagens = await s.mensagens(c.id);
    expect(mensagens.map((m) => [m.conteudo, m.autor])).toEqual([
      ['c', 'contato'],
      ['a', 'atendente'],
      ['a2', 'atendente'],
      ['r', 'robo'],
      ['b', 'robo'],
    ]);
    expect(mensagens[3].etapa_id).toBe('etapa-2');
    expect(mensagens[0].etapa_id).toBeNull();
    expect(c).toMatchObject({
      robo_id: roboUsuario.id,
      robo_nome: 'Robô de vendas',
      etapa_id: 'etapa-2',
      ultima_mensagem_do_contato_em: em(0).toISOString(),
      ultima_mensagem_do_robo_em: em(4).toISOString(),
    });
  });

  it("an automatic message of the inbox (no sender) is stored as robo, but is no robot answer: ultima_mensagem_do_robo_em stays", async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const t0 = Date.parse('2026-11-21T13:00:00.000Z');
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'oi', criadaEm: new Date(t0), status: 'pending' }));
    const saudacao = { ...eventoDeMensagem({ conversa, contato, conteudo: 'Já respondemos', criadaEm: new Date(t0 + 1000), tipo: 'template' }), sender: null };
    expect((await s.registrar(sistema, saudacao)).mensagens_novas).toBe(1);
    const c = await s.conversaDoSuporte(conversa);
    expect((await s.mensagens(c.id)).map((m) => [m.conteudo, m.autor])).toEqual([
      ['oi', 'contato'],
      ['Já respondemos', 'robo'],
    ]);
    expect(c).toMatchObject({ ultima_mensagem: 'Já respondemos', ultima_mensagem_do_contato_em: new Date(t0).toISOString(), ultima_mensagem_do_robo_em: null });
  });

  it('the chat platform\'s AI assistant (Captain) is a robot answering: robo, and ultima_mensagem_do_robo_em moves, with no robot linked by its id', async () => {
    const idDoBot = idDoSuporte();
    await s.criar('robo', { nome: 'Bot de mesmo id', suporte_bot_id: idDoBot });
    const conversa = idDoSuporte();
    const contato = novoContato();
    const t0 = Date.parse('2026-11-21T14:00:00.000Z');
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'oi', criadaEm: new Date(t0), status: 'pending' }));
    const doAssistente = eventoDeMensagem({ conversa, contato, conteudo: 'Sou o assistente', criadaEm: new Date(t0 + 1000), tipo: 'outgoing' });
    await s.registrar(sistema, { ...doAssistente, sender: { id: idDoBot, name: 'Captain', type: 'captain_assistant' } });
    const aninhada = mensagemAninhada({ id: idDoSuporte(), conversa, conteudo: 'De novo', tipo: 1, senderType: 'Captain::Assistant', senderId: idDoBot, criadaEm: new Date(t0 + 2000) });
    await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa, contato, mensagens: [aninhada] }));
    const c = await s.conversaDoSuporte(conversa);
    expect((await s.mensagens(c.id)).map((m) => [m.conteudo, m.autor])).toEqual([
      ['oi', 'contato'],
      ['Sou o assistente', 'robo'],
      ['De novo', 'robo'],
    ]);
    expect(c).toMatchObject({ robo_id: null, ultima_mensagem_do_robo_em: new Date(t0 + 2000).toISOString() });
  });

  it('an agent bot\'s message links its robot when the conversation has none', async () => {
    const idDoBot = idDoSuporte();
    const robo = await s.criar('robo', { nome: 'Bot da triagem', suporte_bot_id: idDoBot });
    const conversa = idDoSuporte();
    await s.registrar(sistema, eventoDeMensagem({ conversa, tipo: 'outgoing', remetente: { id: idDoBot, type: 'agent_bot' } }));
    expect((await s.conversaDoSuporte(conversa)).robo_id).toBe(robo.id);
  });

  it('a robot deleted in another process, while this one still knows its identity, is linked to no conversation', async () => {
    const idDoBot = idDoSuporte();
    const robo = await s.criar('robo', { nome: 'Bot que sai', suporte_bot_id: idDoBot });
    const doBot = (conversa: number) => s.registrar(sistema, eventoDeMensagem({ conversa, tipo: 'outgoing', remetente: { id: idDoBot, type: 'agent_bot' } }));
    const antes = idDoSuporte();
    await doBot(antes);
    expect((await s.conversaDoSuporte(antes)).robo_id).toBe(robo.id);
    // deleted as another process deletes it: this process's identities are not told
    await banco('sales').query('UPDATE robo SET deletado_em = NOW(3) WHERE id = ?', { replacements: [robo.id] });
    const depois = idDoSuporte();
    expect(await doBot(depois)).toMatchObject({ mensagens_novas: 1 });
    expect((await s.conversaDoSuporte(depois)).robo_id).toBeNull();
    // the link made before the deletion stays (history)
    expect((await s.conversaDoSuporte(antes)).robo_id).toBe(robo.id);
  });

  it("the team's robo_id by PATCH stays: a later robot message relinks neither an unlinked conversation nor one given another robot", async () => {
    const idDoBot = idDoSuporte();
    const robo = await s.criar('robo', { nome: 'Bot que responde', suporte_bot_id: idDoBot });
    const outro = await s.criar('robo', { nome: 'Bot escolhido' });
    const doBot = (conversa: number) => s.registrar(sistema, eventoDeMensagem({ conversa, tipo: 'outgoing', remetente: { id: idDoBot, type: 'agent_bot' } }));
    const patch = async (id: string, robo_id: string | null) =>
      expect((await s.api.patch(`/conversa/${id}`, { token: await s.admin(), body: { robo_id } })).status).toBe(200);

    const desligada = idDoSuporte();
    const { conversa_id } = await doBot(desligada);
    await patch(conversa_id, null);
    await doBot(desligada);
    expect(await s.conversaDoSuporte(desligada)).toMatchObject({ robo_id: null, quantidade_mensagens: 2 });

    const trocada = idDoSuporte();
    const { conversa_id: trocadaId } = await s.registrar(sistema, eventoDeMensagem({ conversa: trocada }));
    await patch(trocadaId, outro.id);
    await patch(trocadaId, null);
    await doBot(trocada);
    expect((await s.conversaDoSuporte(trocada)).robo_id).toBeNull();
    await patch(trocadaId, outro.id);
    await doBot(trocada);
    expect((await s.conversaDoSuporte(trocada)).robo_id).toBe(outro.id);

    // a PATCH of other fields leaves the conversation following its robot
    const seguida = idDoSuporte();
    const { conversa_id: seguidaId } = await s.registrar(sistema, eventoDeMensagem({ conversa: seguida }));
    expect((await s.api.patch(`/conversa/${seguidaId}`, { token: await s.admin(), body: { status: 'open' } })).status).toBe(200);
    await doBot(seguida);
    expect((await s.conversaDoSuporte(seguida)).robo_id).toBe(robo.id);

    // and so does one sending back what the conversation holds, no robot included (a form sending every field)
    const devolvida = idDoSuporte();
    const { conversa_id: devolvidaId } = await s.registrar(sistema, eventoDeMensagem({ conversa: devolvida }));
    const formulario = { cliente_id: null, robo_id: null, status: 'open' };
    expect((await s.api.patch(`/conversa/${devolvidaId}`, { token: await s.admin(), body: formulario })).status).toBe(200);
    await doBot(devolvida);
    expect((await s.conversaDoSuporte(devolvida)).robo_id).toBe(robo.id);
  });

  it('a robot the team chose and then deleted stays the conversation\'s robot (history): no robot message links another, only a PATCH does', async () => {
    const idDoBot = idDoSuporte();
    const queResponde = await s.criar('robo', { nome: 'Bot que continua', suporte_bot_id: idDoBot });
    const escolhido = await s.criar('robo', { nome: 'Bot aposentado' });
    const conversa = idDoSuporte();
    const { conversa_id } = await s.registrar(sistema, eventoDeMensagem({ conversa }));
    const patch = async (robo_id: string) => s.api.patch(`/conversa/${conversa_id}`, { token: await s.admin(), body: { robo_id } });
    expect((await patch(escolhido.id)).status).toBe(200);
    expect((await s.api.del(`/robo/${escolhido.id}`, { token: await s.admin() })).status).toBe(204);

    await s.registrar(sistema, eventoDeMensagem({ conversa, tipo: 'outgoing', remetente: { id: idDoBot, type: 'agent_bot' } }));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ robo_id: escolhido.id, robo_nome: 'Bot aposentado', quantidade_mensagens: 2 });
    // sent back while the conversation holds it, the deleted robot is no change; another one can be
    // chosen, and then the deleted one cannot be chosen again
    expect((await patch(escolhido.id)).status).toBe(200);
    expect((await patch(queResponde.id)).status).toBe(200);
    expect((await s.conversaDoSuporte(conversa)).robo_id).toBe(queResponde.id);
    esperarProblema(await patch(escolhido.id), 422);
  });
});

describe('DESIGN §7: counters and last-message fields', () => {
  it('a message that arrives late counts, but does not take the place of a more recent last message', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'segunda', criadaEm: new Date('2026-11-21T10:05:00Z') }));
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'primeira', criadaEm: new Date('2026-11-21T10:00:00Z') }));
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ quantidade_mensagens: 2, ultima_mensagem: 'segunda', ultima_mensagem_em: '2026-11-21T10:05:00.000Z' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['primeira', 'segunda']);
  });

  it('of messages in the same second, the last message is the platform\'s last, whatever order they arrive in and whatever edits follow', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const segundo = new Date('2026-11-21T10:10:00Z');
    const pergunta = eventoDeMensagem({ conversa, contato, conteudo: 'pergunta', criadaEm: segundo });
    const resposta = eventoDeMensagem({ conversa, contato, conteudo: 'resposta', criadaEm: segundo, tipo: 'outgoing' });
    expect(resposta.id).toBeGreaterThan(pergunta.id);
    // the answer arrives first, the question after it (another batch)
    await s.registrar(sistema, resposta);
    await s.registrar(sistema, pergunta);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ ultima_mensagem: 'resposta', quantidade_mensagens: 2 });
    // an edit, then the deletion, of the question: the answer stays the last message
    await s.registrar(sistema, { ...pergunta, event: 'message_updated', content: 'pergunta editada' });
    await s.registrar(sistema, { ...pergunta, event: 'message_updated', content: 'This message was deleted', content_attributes: { deleted: true } });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ ultima_mensagem: 'resposta' });
    // an edit of the answer is the last message's
    await s.registrar(sistema, { ...resposta, event: 'message_updated', content: 'resposta editada' });
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ ultima_mensagem: 'resposta editada', ultima_mensagem_em: '2026-11-21T10:10:00.000Z' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['This message was deleted', 'resposta editada']);

    // both in one batch, the later one first
    const outra = idDoSuporte();
    const a = eventoDeMensagem({ conversa: outra, contato, conteudo: 'a', criadaEm: segundo });
    const b = eventoDeMensagem({ conversa: outra, contato, conteudo: 'b', criadaEm: segundo });
    const doSistema = await autenticarWebhook(sistema.id, 'suporte', sistema.token);
    await Promise.all([b, a].map((e) => registrarEventoDoSuporte(doSistema, lerEventoDoSuporte(e))));
    expect(await s.conversaDoSuporte(outra)).toMatchObject({ ultima_mensagem: 'b', quantidade_mensagens: 2 });
  });

  it('many messages of one conversation arriving at once are all counted, and the most recent is the last message', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const base = Date.parse('2026-11-22T08:00:00Z');
    const ordem = Array.from({ length: 40 }, (_, i) => i).sort(() => Math.random() - 0.5);
    const respostas = await Promise.all(
      ordem.map((i) => s.webhook(sistema, eventoDeMensagem({ conversa, contato, conteudo: `m${i}`, criadaEm: new Date(base + i * 1000) }))),
    );
    expect(respostas.every((r) => r.status === 200 && r.body.mensagens_novas === 1)).toBe(true);
    expect(new Set(respostas.map((r) => r.body.conversa_id)).size).toBe(1);
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ quantidade_mensagens: 40, ultima_mensagem: 'm39', ultima_mensagem_em: new Date(base + 39_000).toISOString() });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
  });

  it('a message created and edited at the same instant ends with the edited text', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa, conteudo: 'rascunho' });
    const [criada, editada] = await Promise.all([s.webhook(sistema, evento), s.webhook(sistema, { ...evento, event: 'message_updated', content: 'final' })]);
    expect([criada.status, editada.status]).toEqual([200, 200]);
    expect(criada.body.mensagens_novas + editada.body.mensagens_novas).toBe(1);
    const c = await s.conversaDoSuporte(conversa);
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['final']);
    expect(c).toMatchObject({ quantidade_mensagens: 1, ultima_mensagem: 'final' });
  });

  it('message_updated changes the stored text (and the last message when it is that one); an unknown one is stored', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const criadaEm = new Date('2026-11-21T11:00:00Z');
    const evento = eventoDeMensagem({ conversa, contato, conteudo: 'antes', criadaEm });
    await s.registrar(sistema, evento);
    const r = await s.registrar(sistema, { ...evento, event: 'message_updated', content: 'depois' });
    expect(r.mensagens_novas).toBe(0);
    const c = await s.conversaDoSuporte(conversa);
    expect(c.ultima_mensagem).toBe('depois');
    expect(c.quantidade_mensagens).toBe(1);
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['depois']);

    const nova = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, evento: 'message_updated', conteudo: 'editada antes de chegar' }));
    expect(nova.mensagens_novas).toBe(1);
  });

  it('a message deleted in the platform stays deleted: an edit or read receipt arriving after the deletion changes nothing', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const criada = eventoDeMensagem({ conversa, contato, conteudo: 'meu cpf é 123', criadaEm: new Date('2026-11-21T12:00:00Z') });
    await s.registrar(sistema, criada);
    const aviso = 'This message was deleted';
    const apagada = { ...criada, event: 'message_updated', content: aviso, content_attributes: { deleted: true } };
    await s.registrar(sistema, apagada);
    // sent before the deletion, arriving after it: an edit, then a read receipt with the first text
    await s.registrar(sistema, { ...criada, event: 'message_updated', content: 'meu cpf é 1234' });
    await s.registrar(sistema, { ...criada, event: 'message_updated' });
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ ultima_mensagem: aviso, quantidade_mensagens: 1 });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual([aviso]);

    // a message first seen already deleted (its message_created lost) stays deleted too, and
    // keeps no attachment the event may still list (the platform removed them)
    const anexo = { id: idDoSuporte(), data_url: 'https://chat.exemplo.test/rails/active_storage/apagado.pdf', file_type: 'file' };
    const desconhecida = eventoDeMensagem({ conversa, contato, conteudo: 'segredo', criadaEm: new Date('2026-11-21T12:05:00Z'), anexos: [anexo] });
    expect(await s.registrar(sistema, { ...desconhecida, event: 'message_updated', content: aviso, content_attributes: { deleted: true } })).toMatchObject({ mensagens_novas: 1 });
    expect((await s.mensagens(c.id)).at(-1)).toMatchObject({ conteudo: aviso, anexos: [] });
    await s.registrar(sistema, desconhecida);
    await s.registrar(sistema, { ...desconhecida, event: 'message_updated' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual([aviso, aviso]);
    expect((await s.conversaDoSuporte(conversa)).ultima_mensagem).toBe(aviso);
  });
});

describe('SPEC §3: the status mirrors the chat platform', () => {
  it('conversation_status_changed, conversation_updated and the status a message event carries are mirrored', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, status: 'pending' }));
    await s.registrar(sistema, eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
    await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa, contato: { ...contato, nome: 'Nome Novo' }, status: 'snoozed' }));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'snoozed', contato_nome: 'Nome Novo' });
    await s.registrar(sistema, eventoDeMensagem({ conversa, contato, status: 'resolved' }));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');
  });

  it('conversation_created registers the conversation with the visible messages it carries', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const mensagens = [
      mensagemAninhada({ id: idDeMensagem(), conversa, conteudo: 'oi', tipo: 0, senderType: 'Contact', senderId: contato.id }),
      mensagemAninhada({ id: idDeMensagem(), conversa, conteudo: 'nota', tipo: 1, privada: true, senderType: 'User', senderId: 3 }),
      mensagemAninhada({ id: idDeMensagem(), conversa, conteudo: 'atividade', tipo: 2 }),
    ];
    const r = await s.registrar(sistema, eventoDeConversa('conversation_created', { conversa, contato, mensagens, etapa: 'inicio' }));
    expect(r.mensagens_novas).toBe(1);
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ etapa_id: 'inicio', quantidade_mensagens: 1, contato_nome: contato.nome });
    expect((await s.mensagens(c.id)).map((m) => [m.conteudo, m.autor])).toEqual([['oi', 'contato']]);
  });

  it('other events are answered 200 and change nothing', async () => {
    const antes = await Conversa.count();
    const r = await s.webhook(sistema, fixture('chatwoot', 'docs-2022_webwidget_triggered.json'));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ conversa_id: null, mensagens_novas: 0, ignorado: expect.stringContaining('webwidget_triggered') });
    expect(await Conversa.count()).toBe(antes);
  });
});

describe('SPEC §3 (the status mirrors the chat platform): events arriving out of order, ordered by the platform\'s updated_at', () => {
  /** Chatwoot's `updated_at` of a conversation: unix seconds with microseconds (Rails' `updated_at.to_f`). */
  const segundos = (iso: string, micro = 0) => Date.parse(iso) / 1000 + micro / 1e6;
  const conversaEm = (evento: ReturnType<typeof eventoDeConversa>, atualizadaEm: unknown) => ({ ...evento, updated_at: atualizadaEm });
  const mensagemEm = (evento: ReturnType<typeof eventoDeMensagem>, atualizadaEm: unknown) => ({
    ...evento,
    conversation: { ...evento.conversation, updated_at: atualizadaEm },
  });
  /** A message_updated with the message's `updated_at` where Chatwoot writes it: in its copy inside `conversation.messages`. */
  const edicaoEm = (evento: ReturnType<typeof eventoDeMensagem>, conteudo: string, atualizadaEm: unknown) => ({
    ...evento,
    event: 'message_updated',
    content: conteudo,
    conversation: { ...evento.conversation, messages: [{ id: evento.id, content: conteudo, updated_at: atualizadaEm }] },
  });

  it('an older status change arriving after a newer one leaves status, contact and step as the newer set them; the same time again applies, a newer one too', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    await s.registrar(sistema, mensagemEm(eventoDeMensagem({ conversa, contato, status: 'pending' }), segundos('2026-11-01T10:00:00Z')));
    await s.registrar(
      sistema,
      conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved', etapa: 'fim' }), segundos('2026-11-01T10:00:02Z')),
    );
    // sent at 10:00:01, delivered late
    const atrasado = conversaEm(
      eventoDeConversa('conversation_status_changed', { conversa, contato: { ...contato, nome: 'Nome Antigo' }, status: 'open', etapa: 'inicio' }),
      segundos('2026-11-01T10:00:01Z'),
    );
    expect(await s.registrar(sistema, atrasado)).toMatchObject({ conversa_id: expect.any(String), mensagens_novas: 0 });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'resolved', contato_nome: contato.nome, etapa_id: 'fim' });

    // another copy of the same moment (Chatwoot sends conversation_updated beside the status change)
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_updated', { conversa, contato, status: 'snoozed' }), segundos('2026-11-01T10:00:02Z')));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('snoozed');
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }), segundos('2026-11-01T10:00:03Z')));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
  });

  it('updated_at as an ISO date is read too, and a microsecond apart tells two copies apart', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const status = (valor: string, em: unknown) => s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: valor }), em));
    await status('resolved', '2026-11-01T10:00:05.500Z');
    await status('open', '2026-11-01T10:00:05.499Z');
    // the same moment with an offset
    await status('pending', '2026-11-01T07:00:05.400-03:00');
    expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');
    await status('snoozed', segundos('2026-11-01T10:00:06Z', 2));
    await status('open', segundos('2026-11-01T10:00:06Z', 1));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('snoozed');
  });

  it('a message event carrying an older copy of the conversation stores its message but leaves the newer status', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    await s.registrar(sistema, mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'primeira', status: 'pending', criadaEm: new Date('2026-11-01T11:00:00Z') }), segundos('2026-11-01T11:00:00Z')));
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }), segundos('2026-11-01T11:00:05Z')));
    const atrasada = mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'segunda', status: 'pending', criadaEm: new Date('2026-11-01T11:00:03Z') }), segundos('2026-11-01T11:00:03Z'));
    expect(await s.registrar(sistema, atrasada)).toMatchObject({ mensagens_novas: 1 });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', quantidade_mensagens: 2, ultima_mensagem: 'segunda' });
  });

  it('an event without updated_at, or with one that is no time, is applied in arrival order, as before', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const status = (valor: string, em?: unknown) =>
      s.registrar(sistema, em === undefined ? eventoDeConversa('conversation_status_changed', { conversa, contato, status: valor }) : conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: valor }), em));
    await status('resolved', segundos('2026-11-01T12:00:00Z'));
    await status('open');
    expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
    await status('snoozed', 'ontem');
    expect((await s.conversaDoSuporte(conversa)).status).toBe('snoozed');
    await status('pending', 1e17);
    expect((await s.conversaDoSuporte(conversa)).status).toBe('pending');
    // the time applied is still there: an older copy is left out
    await status('open', segundos('2026-11-01T11:59:59Z'));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('pending');
  });

  it('a time more than ten minutes ahead of the server\'s clock orders nothing: its event applies in arrival order, and later events still apply', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const agora = Date.now() / 1000;
    const status = (valor: string, em: unknown) => s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: valor }), em));
    await status('pending', agora - 60);
    // a day ahead, and the last moment a date column holds: applied, but not kept as the conversation's time
    await status('resolved', agora + 86_400);
    expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');
    await status('open', agora - 30);
    expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
    await status('snoozed', '9999-12-31T23:59:59Z');
    await status('open', agora - 20);
    expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
    // a minute ahead (a platform clock a little fast) still orders
    await status('resolved', agora + 60);
    await status('pending', agora - 10);
    expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');

    const criada = eventoDeMensagem({ conversa, contato, conteudo: 'v0' });
    await s.registrar(sistema, criada);
    await s.registrar(sistema, edicaoEm(criada, 'v1', new Date(Date.now() + 86_400_000).toISOString()));
    await s.registrar(sistema, edicaoEm(criada, 'v2', new Date(Date.now() - 5_000).toISOString()));
    const c = await s.conversaDoSuporte(conversa);
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['v2']);
  });

  it('an older edit of a message arriving after a newer one leaves the newer text (its time in the message\'s copy in the conversation, or at the top)', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const criada = eventoDeMensagem({ conversa, contato, conteudo: 'v0', criadaEm: new Date('2026-11-01T13:00:00Z') });
    await s.registrar(sistema, { ...edicaoEm(criada, 'v0', '2026-11-01T13:00:00.000Z'), event: 'message_created' });
    await s.registrar(sistema, edicaoEm(criada, 'v2', '2026-11-01T13:00:02.000Z'));
    await s.registrar(sistema, edicaoEm(criada, 'v1', '2026-11-01T13:00:01.000Z'));
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ ultima_mensagem: 'v2', quantidade_mensagens: 1 });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['v2']);
    // the same time again applies
    await s.registrar(sistema, edicaoEm(criada, 'v2, de novo', '2026-11-01T13:00:02.000Z'));
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['v2, de novo']);
    // at the top of the event, in unix seconds
    await s.registrar(sistema, { ...criada, event: 'message_updated', content: 'v3', updated_at: segundos('2026-11-01T13:00:03Z') });
    await s.registrar(sistema, { ...criada, event: 'message_updated', content: 'v2,5', updated_at: segundos('2026-11-01T13:00:02.500Z') });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['v3']);
    expect((await s.conversaDoSuporte(conversa)).ultima_mensagem).toBe('v3');
    // a copy of another message in the conversation says nothing of this one's time
    await s.registrar(sistema, {
      ...criada,
      event: 'message_updated',
      content: 'v4',
      conversation: { ...criada.conversation, messages: [{ id: criada.id + 1, updated_at: '2026-11-01T12:00:00.000Z' }] },
    });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['v4']);
  });

  it('in one batch, the newest copy wins whatever order the events come in, for the conversation and for a message', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    // every event carries its copy of the conversation, the edits' as of the message's creation
    const criada = mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'v0', criadaEm: new Date('2026-11-01T14:00:00Z') }), segundos('2026-11-01T14:00:00Z'));
    await s.registrar(sistema, criada);
    const doSistema = await autenticarWebhook(sistema.id, 'suporte', sistema.token);
    const registrar = (evento: unknown) => registrarEventoDoSuporte(doSistema, lerEventoDoSuporte(evento));
    // the first occupies the conversation's line of batches; the other four wait and go in one batch
    await Promise.all([
      registrar(conversaEm(eventoDeConversa('conversation_updated', { conversa, contato, status: 'pending' }), segundos('2026-11-01T14:00:01Z'))),
      registrar(conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' }), segundos('2026-11-01T14:00:03Z'))),
      registrar(edicaoEm(criada, 'v2', '2026-11-01T14:00:02.000Z')),
      registrar(conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }), segundos('2026-11-01T14:00:02Z'))),
      registrar(edicaoEm(criada, 'v1', '2026-11-01T14:00:01.000Z')),
    ]);
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ status: 'resolved', ultima_mensagem: 'v2' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['v2']);
  });

  it('in one batch as one by one: an event without a time applies, keeps the newest time, and an older copy after it is still refused', async () => {
    const guardada = async (conversa: number) => {
      const c = await s.conversaDoSuporte(conversa);
      const [[l]] = (await banco('sales').query('SELECT suporte_atualizada_em AS em FROM conversa WHERE id = ?', { replacements: [c.id] })) as [
        { em: Date | null }[],
        unknown,
      ];
      return { status: c.status, em: l.em?.toISOString() ?? null };
    };
    const doSistema = await autenticarWebhook(sistema.id, 'suporte', sistema.token);
    const registrar = (evento: unknown) => registrarEventoDoSuporte(doSistema, lerEventoDoSuporte(evento));
    const cenario = async (emLote: boolean) => {
      const conversa = idDoSuporte();
      const contato = novoContato();
      const ev = (status: string, em?: string) => {
        const e = eventoDeConversa('conversation_status_changed', { conversa, contato, status });
        return em ? conversaEm(e, segundos(em)) : e;
      };
      await s.registrar(sistema, ev('pending', '2026-11-01T16:00:00Z'));
      // resolved, then open without a time, then a copy older than the resolved one
      const seguintes = [ev('snoozed', '2026-11-01T16:00:01Z'), ev('resolved', '2026-11-01T16:00:05Z'), ev('open'), ev('pending', '2026-11-01T16:00:03Z')];
      // the first occupies the conversation's line of batches; the other three wait and go in one batch
      if (emLote) await Promise.all(seguintes.map(registrar));
      else for (const e of seguintes) await registrar(e);
      return guardada(conversa);
    };
    const umAUm = await cenario(false);
    expect(umAUm).toEqual({ status: 'open', em: '2026-11-01T16:00:05.000Z' });
    expect(await cenario(true)).toEqual(umAUm);
  });

  it("the team's status by PATCH stays against copies of the conversation not newer than the one it corrected; a newer change in the platform applies", async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const t1 = segundos('2026-11-01T17:00:00Z', 250);
    const { conversa_id } = await s.registrar(sistema, mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'oi', status: 'pending', criadaEm: new Date('2026-11-01T17:00:00Z') }), t1));
    const corrigir = async (status: string) =>
      expect((await s.api.patch(`/conversa/${conversa_id}`, { token: await s.admin(), body: { status } })).status).toBe(200);
    await corrigir('open');

    // a message event whose copy of the conversation is the one corrected (same updated_at: a webhook
    // built before the correction and delivered after it; Chatwoot touches the conversation with a new
    // message, so a message sent after the correction carries a newer copy, which applies)
    const nova = mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'alguém aí?', status: 'pending', criadaEm: new Date('2026-11-01T17:00:10Z') }), t1);
    expect(await s.registrar(sistema, nova)).toMatchObject({ mensagens_novas: 1 });
    // a copy sent with the first one, delivered late, and an older one
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_updated', { conversa, contato: { ...contato, nome: 'Nome Novo' }, status: 'pending' }), t1));
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' }), segundos('2026-11-01T16:59:59Z')));
    // the copy's other fields still apply: only the status was the team's
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', contato_nome: 'Nome Novo', quantidade_mensagens: 2, ultima_mensagem: 'alguém aí?' });

    // the platform changes the status afterwards: the mirror follows it again
    const t2 = segundos('2026-11-01T17:00:00Z', 251);
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' }), t2));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');
    await corrigir('snoozed');
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_updated', { conversa, contato, status: 'resolved' }), t2));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('snoozed');
    // a message written in the platform after the correction carries a newer copy (Chatwoot touches
    // the conversation): mirrored, status included
    const t3 = segundos('2026-11-01T17:00:00Z', 252);
    const depois = mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'voltei', status: 'resolved', criadaEm: new Date('2026-11-01T17:00:20Z') }), t3);
    expect(await s.registrar(sistema, depois)).toMatchObject({ mensagens_novas: 1 });
    expect((await s.conversaDoSuporte(conversa)).status).toBe('resolved');
  });

  describe('a status corrected while no platform time is known (events without updated_at, or a record from before 0008)', () => {
    /** A conversation recorded from an event without updated_at, and a PATCH of it. */
    const semTempo = async () => {
      const conversa = idDoSuporte();
      const contato = novoContato();
      const { conversa_id } = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'oi', status: 'pending' }));
      const corrigir = async (body: Record<string, unknown>) => s.api.patch(`/conversa/${conversa_id}`, { token: await s.admin(), body });
      const status = async () => (await s.conversaDoSuporte(conversa)).status;
      return { conversa, contato, corrigir, status };
    };
    const agora = () => Date.now() / 1000;

    it('holds against copies the platform stamped before the correction, even after a later correction; a copy stamped after it applies', async () => {
      const { conversa, contato, corrigir, status } = await semTempo();
      const antes = agora() - 60;
      expect((await corrigir({ status: 'open' })).status).toBe(200);
      // the contact's next message, its copy of the conversation stamped before the correction
      const nova = mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'alguém aí?', status: 'pending' }), antes);
      expect(await s.registrar(sistema, nova)).toMatchObject({ mensagens_novas: 1 });
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', ultima_mensagem: 'alguém aí?' });

      // corrected again, now that a platform time is known: the first correction's line stays, so a
      // copy stamped between that time and the first correction is still stale
      expect((await corrigir({ status: 'snoozed' })).status).toBe(200);
      await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'pending' }), antes + 30));
      expect(await status()).toBe('snoozed');

      // the platform changes the conversation after the correction: the mirror follows it again
      await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' }), agora() + 1));
      expect(await status()).toBe('resolved');
    });

    it('an event without a time still applies in arrival order; a refused PATCH (422) leaves no mark', async () => {
      const corrigida = await semTempo();
      expect((await corrigida.corrigir({ status: 'open' })).status).toBe(200);
      await s.registrar(sistema, eventoDeConversa('conversation_status_changed', { conversa: corrigida.conversa, contato: corrigida.contato, status: 'resolved' }));
      expect(await corrigida.status()).toBe('resolved');

      const recusada = await semTempo();
      esperarProblema(await recusada.corrigir({ status: 'open', cliente_id: '00000000-0000-4000-8000-000000000000' }), 422);
      await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_updated', { conversa: recusada.conversa, contato: recusada.contato, status: 'snoozed' }), agora() - 3600));
      expect(await recusada.status()).toBe('snoozed');
    });
  });

  it('after DELETE, a new message starts a new record even with a copy of the conversation older than the deleted record\'s; later events compare with the new one', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const primeiro = await s.registrar(
      sistema,
      mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'antiga', status: 'resolved' }), segundos('2026-11-01T15:00:09Z')),
    );
    expect((await s.api.del(`/conversa/${primeiro.conversa_id}`, { token: await s.admin() })).status).toBe(204);
    const nova = await s.registrar(
      sistema,
      mensagemEm(eventoDeMensagem({ conversa, contato, conteudo: 'nova', status: 'pending' }), segundos('2026-11-01T15:00:05Z')),
    );
    expect(nova).toMatchObject({ conversa_id: expect.any(String), mensagens_novas: 1 });
    expect(nova.conversa_id).not.toBe(primeiro.conversa_id);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ id: nova.conversa_id, status: 'pending', quantidade_mensagens: 1, ultima_mensagem: 'nova' });
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }), segundos('2026-11-01T15:00:04Z')));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('pending');
    await s.registrar(sistema, conversaEm(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }), segundos('2026-11-01T15:00:06Z')));
    expect((await s.conversaDoSuporte(conversa)).status).toBe('open');
  });
});

describe('SPEC §3: after DELETE, only a new message starts a new record', () => {
  it('a message for a deleted conversation starts a new history; a status change, an edit or a private note does not', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const antiga = eventoDeMensagem({ conversa, contato, conteudo: 'antiga' });
    const primeiro = await s.registrar(sistema, antiga);
    const del = await s.api.del(`/conversa/${primeiro.conversa_id}`, { token: await s.admin() });
    expect(del.status).toBe(204);

    // Chatwoot repeats the conversation's last message in every conversation event
    const ultima = mensagemAninhada({ id: antiga.id, conversa, conteudo: 'antiga', tipo: 0, senderType: 'Contact', senderId: contato.id });
    const ignorados = [
      eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }),
      eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open', mensagens: [ultima] }),
      eventoDeConversa('conversation_updated', { conversa, contato, mensagens: [ultima] }),
      { ...antiga, event: 'message_updated', content: 'antiga, editada' },
      eventoDeMensagem({ conversa, contato, conteudo: 'nota', tipo: 'outgoing', privada: true }),
    ];
    for (const evento of ignorados) {
      expect(await s.registrar(sistema, evento)).toMatchObject({ conversa_id: null, mensagens_novas: 0, ignorado: expect.any(String) });
    }
    expect(await s.conversaDoSuporte(conversa)).toBeUndefined();

    const nova = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'nova' }));
    expect(nova.conversa_id).not.toBe(primeiro.conversa_id);
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ id: nova.conversa_id, quantidade_mensagens: 1, ultima_mensagem: 'nova' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['nova']);
  });
});

describe('SPEC §3: a webhook racing the DELETE of its conversation', () => {
  it('does not bring the deleted record back: the event is ignored as if it came after the DELETE', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const primeiro = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'antiga' }));
    const apagando = await novaConexao('sales');
    try {
      // a DELETE under way: the record is marked deleted, not yet committed (as deletarConversa writes it)
      await apagando.beginTransaction();
      await apagando.query(
        `UPDATE conversa SET deletado_em = NOW(3), suporte_mensagem_apagada_ate =
           (SELECT MAX(suporte_mensagem_id) FROM conversa_mensagem WHERE conversa_id = ?) WHERE id = ?`,
        [primeiro.conversa_id, primeiro.conversa_id],
      );
      // the webhook still sees a live record, and waits on the DELETE's lock of its row
      const evento = s.webhook(sistema, eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' }));
      await esperarTravaEsperada(apagando, "the webhook waiting on the DELETE's lock of its row");
      await apagando.commit();
      const res = await evento;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ conversa_id: null, mensagens_novas: 0, ignorado: expect.any(String) });
    } finally {
      await apagando.end();
    }
    expect(await s.conversaDoSuporte(conversa)).toBeUndefined();
    // a new message still starts a new record
    const nova = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'nova' }));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ id: nova.conversa_id, quantidade_mensagens: 1, ultima_mensagem: 'nova' });
  });
});

describe('a batch the database refuses', () => {
  it('answers 500 to its events and the service goes on answering the next ones', async () => {
    const recusado = novoContato();
    const sales = banco('sales');
    await sales.query(`CREATE TRIGGER conversa_recusa BEFORE INSERT ON conversa FOR EACH ROW
      IF NEW.contato_nome = '${recusado.nome}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'recusada'; END IF`);
    try {
      esperarProblema(await s.webhook(sistema, eventoDeMensagem({ conversa: idDoSuporte(), contato: recusado })), 500);
    } finally {
      await sales.query('DROP TRIGGER conversa_recusa');
    }
    const depois = await s.webhook(sistema, eventoDeMensagem({ conversa: idDoSuporte() }));
    expect(depois.status).toBe(200);
    expect(depois.body).toMatchObject({ mensagens_novas: 1 });
  });
});

describe('SPEC §3: a deleted history cannot be restored', () => {
  it('its messages never come back: not as a repeated message_created, nor a read receipt once a new record exists', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const antiga = eventoDeMensagem({ conversa, contato, conteudo: 'antiga', tipo: 'outgoing' });
    const primeiro = await s.registrar(sistema, antiga);
    expect((await s.api.del(`/conversa/${primeiro.conversa_id}`, { token: await s.admin() })).status).toBe(204);

    // the platform sends the deleted message again: no record comes back for it
    expect(await s.registrar(sistema, antiga)).toMatchObject({ conversa_id: null, mensagens_novas: 0, ignorado: expect.any(String) });
    expect(await s.conversaDoSuporte(conversa)).toBeUndefined();

    const nova = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'nova' }));
    // then the old message is read on the phone (message_updated), repeated, and named in a conversation event
    const ultima = mensagemAninhada({ id: antiga.id, conversa, conteudo: 'antiga', tipo: 1 });
    for (const evento of [
      { ...antiga, event: 'message_updated' },
      antiga,
      eventoDeConversa('conversation_updated', { conversa, contato, mensagens: [ultima] }),
    ]) {
      expect(await s.registrar(sistema, evento)).toMatchObject({ conversa_id: nova.conversa_id, mensagens_novas: 0 });
    }
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ id: nova.conversa_id, quantidade_mensagens: 1, ultima_mensagem: 'nova' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['nova']);

    // deleted again, the first history stays deleted too
    expect((await s.api.del(`/conversa/${nova.conversa_id}`, { token: await s.admin() })).status).toBe(204);
    expect(await s.registrar(sistema, antiga)).toMatchObject({ conversa_id: null, ignorado: expect.any(String) });
    expect(await s.conversaDoSuporte(conversa)).toBeUndefined();
  });
});

describe('SPEC §3: events of a deleted conversation arriving together', () => {
  it('in one batch, the events after the new message land on its new record; those before it are ignored, as alone', async () => {
    const conversa = idDoSuporte();
    const contato = novoContato();
    const primeiro = await s.registrar(sistema, eventoDeMensagem({ conversa, contato, conteudo: 'antiga' }));
    expect((await s.api.del(`/conversa/${primeiro.conversa_id}`, { token: await s.admin() })).status).toBe(204);

    const doSistema = await autenticarWebhook(sistema.id, 'suporte', sistema.token);
    const registrar = (evento: unknown) => registrarEventoDoSuporte(doSistema, lerEventoDoSuporte(evento));
    const nova = eventoDeMensagem({ conversa, contato, conteudo: 'nova', status: 'pending' });
    // the first occupies the conversation's line of batches; the other three wait and go in one batch
    const [, antes, criada, depois] = await Promise.all([
      registrar(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' })),
      registrar(eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' })),
      registrar(nova),
      registrar({ ...nova, event: 'message_updated', content: 'nova, editada' }),
    ]);
    expect(antes).toMatchObject({ conversa_id: null, ignorado: expect.any(String) });
    expect(criada).toMatchObject({ conversa_id: expect.any(String), mensagens_novas: 1 });
    expect(depois).toMatchObject({ conversa_id: criada.conversa_id, mensagens_novas: 0 });
    expect(depois.ignorado).toBeUndefined();
    const c = await s.conversaDoSuporte(conversa);
    expect(c).toMatchObject({ id: criada.conversa_id, status: 'pending', ultima_mensagem: 'nova, editada' });
    expect((await s.mensagens(c.id)).map((m) => m.conteudo)).toEqual(['nova, editada']);
  });
});

describe('DESIGN §7, §10: who may call the webhook', () => {
  it('without the token, or with another, answers 401 and stores nothing', async () => {
    const conversa = idDoSuporte();
    esperarProblema(await s.webhook(sistema, eventoDeMensagem({ conversa }), { token: null }), 401);
    const errado = await s.webhook(sistema, eventoDeMensagem({ conversa }), { token: 'x'.repeat(43) });
    esperarProblema(errado, 401);
    // the token goes in the query string: the answer asks for that one, not for a bearer token
    expect(errado.headers.get('www-authenticate')).toBe('Query-Token name="token"');
    const outro = await s.criarSistema('suporte');
    esperarProblema(await s.webhook(sistema, eventoDeMensagem({ conversa }), { token: outro.token }), 401);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
  });

  it('a body that is not JSON: 401 without the token (nothing said about the body), 400 with it', async () => {
    const semToken = esperarProblema(await s.webhook(sistema, undefined, { raw: '{"event": ', token: null }), 401);
    expect(JSON.stringify(semToken)).not.toContain('JSON');
    const comToken = esperarProblema(await s.webhook(sistema, undefined, { raw: '{"event": ' }), 400);
    expect(comToken.detail).toBe('O corpo não é um JSON válido.');
  });

  it('an unknown system, a deleted one, an inactive one or one of another type answers 401, as a wrong token does: the token authenticates, and a caller without one learns nothing of which systems exist (DESIGN §10)', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa });
    const semToken = esperarProblema(await s.webhook(sistema, evento, { token: null }), 401);
    const desconhecido = esperarProblema(await s.webhook({ id: '019a0000-0000-7000-8000-000000000000', token: sistema.token }, evento), 401);
    expect(desconhecido.detail).toBe(semToken.detail);
    const gateway = await s.criarSistema('gateway');
    esperarProblema(await s.webhook(gateway, evento), 401);
    const inativo = await s.criarSistema('suporte', { ativo: false });
    esperarProblema(await s.webhook(inativo, evento), 401);
    const apagado = await s.criarSistema('suporte');
    expect((await s.api.del(`/config_system/${apagado.id}`, { token: await s.admin() })).status).toBe(204);
    esperarProblema(await s.webhook(apagado, evento), 401);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
  });

  it('an id no system has is not remembered: webhooks to made-up ids, which anyone can send, cannot fill the cache of systems and push the real ones out', async () => {
    const { randomUUID } = await import('node:crypto');
    const inventado = randomUUID();
    const evento = () => eventoDeMensagem({ conversa: idDoSuporte() });
    esperarProblema(await s.webhook({ id: inventado, token: sistema.token }, evento()), 401);
    // a system that comes to hold that id (here written straight in the database, as no route
    // chooses ids) is taken at once, not after the cache's 10 seconds
    const novo = await s.criarSistema('suporte');
    await banco('sales').query('UPDATE config_system SET id = ? WHERE id = ?', { replacements: [inventado, novo.id] });
    expect((await s.webhook({ id: inventado, token: novo.token }, evento())).status).toBe(200);
  });

  it('an address whose system id is not an id (letters outside ASCII, symbols) answers 401 like any unknown system', async () => {
    const evento = eventoDeMensagem({ conversa: idDoSuporte() });
    for (const id of ['é', 'ação', 'a b', 'x'.repeat(65)]) esperarProblema(await s.webhook({ id: encodeURIComponent(id), token: sistema.token }, evento), 401);
  });

  it('a refused caller does not get its body parsed: a body of megabytes without the token (or for no system) is answered 401 before the JSON parser sees it', async () => {
    const grande = JSON.stringify({ ...eventoDeMensagem({ conversa: idDoSuporte() }), content: 'x'.repeat(3_500_000) });
    const parse = jest.spyOn(JSON, 'parse');
    try {
      esperarProblema(await s.webhook(sistema, undefined, { raw: grande, token: null }), 401);
      esperarProblema(await s.webhook({ id: '019a0000-0000-7000-8000-000000000000', token: sistema.token }, undefined, { raw: grande }), 401);
      expect(parse.mock.calls.filter(([texto]) => typeof texto === 'string' && texto.length > 3_000_000)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it('a renewed token replaces the old one at once', async () => {
    const proprio = await s.criarSistema('suporte');
    const renovado = await s.api.patch(`/config_system/${proprio.id}`, { token: await s.admin(), body: { renovar_token: true } });
    expect(renovado.status).toBe(200);
    expect(renovado.body.token).toEqual(expect.any(String));
    expect(renovado.headers.get('cache-control')).toBe('no-store');
    esperarProblema(await s.webhook(proprio, eventoDeMensagem({ conversa: idDoSuporte() })), 401);
    expect((await s.webhook({ id: proprio.id, token: renovado.body.token }, eventoDeMensagem({ conversa: idDoSuporte() }))).status).toBe(200);
  });

  it('an event of another account than the system\'s answers 400 and stores nothing', async () => {
    const conversa = idDoSuporte();
    const p = esperarProblema(await s.webhook(sistema, eventoDeMensagem({ conversa, conta: 8 })), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'account.id' })]);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
  });

  it("a conversation event as Chatwoot sends it (no account field, the account in its messages) of another account answers 400 too; of the system's own, it is stored", async () => {
    const conversa = idDoSuporte();
    const comoAPlataforma = (conta: number) => {
      const { account: _semConta, ...evento } = eventoDeConversa('conversation_status_changed', {
        conversa,
        status: 'resolved',
        mensagens: [{ ...mensagemAninhada({ id: idDeMensagem(), conversa, conteudo: 'oi', tipo: 0 }), account_id: conta }],
      });
      return evento;
    };
    const p = esperarProblema(await s.webhook(sistema, comoAPlataforma(8)), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'account.id' })]);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
    expect((await s.webhook(sistema, comoAPlataforma(1))).status).toBe(200);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(1);
  });

  it('a step id the platform holds as a number (a custom attribute of type number) is kept, as text', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeConversa('conversation_updated', { conversa });
    await s.registrar(sistema, { ...evento, custom_attributes: { etapa_id: 3 } });
    expect((await s.conversaDoSuporte(conversa)).etapa_id).toBe('3');
  });

  it('a message of 150,000 characters is stored whole', async () => {
    const conversa = idDoSuporte();
    const longa = 'ã'.repeat(150_000);
    await s.registrar(sistema, eventoDeMensagem({ conversa, conteudo: longa }));
    const c = await s.conversaDoSuporte(conversa);
    expect(c.ultima_mensagem).toBe(longa);
    expect((await s.mensagens(c.id))[0].conteudo).toBe(longa);
  });

  it('a message of 150,000 characters the platform escapes, sent twice in its event as Chatwoot does (about 1.8 MB), is stored whole', async () => {
    const conversa = idDoSuporte();
    const longa = '<'.repeat(150_000);
    const evento = eventoDeMensagem({ conversa, conteudo: longa });
    evento.conversation = { ...evento.conversation, messages: [{ ...evento.conversation.messages?.[0], id: evento.id, content: longa }] };
    // Rails writes <, > and & as \u003c, \u003e and \u0026
    const raw = JSON.stringify(evento).replace(/</g, '\\u003c');
    expect(Buffer.byteLength(raw)).toBeGreaterThan(1_800_000);
    expect((await s.webhook(sistema, undefined, { raw, headers: { 'content-type': 'application/json' } })).status).toBe(200);
    expect((await s.mensagens((await s.conversaDoSuporte(conversa)).id))[0].conteudo).toBe(longa);
    // that limit is this webhook's alone: the gateway's and every other route keep DESIGN's 1 MiB
    const grande = JSON.stringify({ event: 'messages.upsert', data: { texto: 'x'.repeat(1_100_000) } });
    const gateway = await s.criarSistema('gateway');
    const json = { 'content-type': 'application/json' };
    expect((await s.api.post(`/webhooks/gateway/${gateway.id}`, { query: { token: gateway.token }, headers: json, raw: grande })).status).toBe(413);
    expect((await s.api.post('/cliente', { token: await s.admin(), headers: json, raw: grande })).status).toBe(413);
  });

  it("an event weighs at least what its text adds to its batch's SQL, so large messages are cut into batches under the packet limit", () => {
    // the worst escaping: quotes and backslashes, each written twice by SQL
    for (const conteudo of ['"\\'.repeat(50_000), 'ção€'.repeat(50_000), 'oi']) {
      const evento = lerEventoDoSuporte(eventoDeMensagem({ conversa: 1, conteudo }));
      expect(evento.tipo).toBe('mensagem');
      // the message's row and the conversation's last message
      const sql = format('(?, ?)', [conteudo, conteudo]);
      expect(pesoDoEvento(evento as Exclude<typeof evento, { tipo: 'ignorado' }>)).toBeGreaterThanOrEqual(Buffer.byteLength(sql));
    }
    const grande = lerEventoDoSuporte(eventoDeMensagem({ conversa: 1, conteudo: 'x'.repeat(150_000) }));
    expect(200 * pesoDoEvento(grande as Exclude<typeof grande, { tipo: 'ignorado' }>)).toBeGreaterThan(MENSAGEM_MAXIMA);
  });

  it("an event weighs at least what its attachments' addresses and names add to its batch's SQL", () => {
    // an address of 2,000 characters, quotes escaped, its last segment the attachment's name
    const endereco = `https://chat.exemplo.test/${"'".repeat(1000)}/${"a'".repeat(480)}`;
    const anexos = Array.from({ length: ANEXOS_POR_MENSAGEM }, (_, i) => ({ id: i + 1, data_url: endereco, file_type: 'image' }));
    const evento = lerEventoDoSuporte(eventoDeMensagem({ conversa: 1, conteudo: 'oi', anexos }));
    if (evento.tipo !== 'mensagem' || !evento.mensagem) throw new Error('a message event was expected');
    expect(evento.mensagem.anexos).toHaveLength(ANEXOS_POR_MENSAGEM);
    const sql = evento.mensagem.anexos.map((a) => format('(?, ?)', [a.endereco, a.nome])).join(', ');
    expect(pesoDoEvento(evento)).toBeGreaterThanOrEqual(Buffer.byteLength(sql));
  });

  it('a payload out of shape answers 400 naming the fields, and stores nothing', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa });
    const semConversa = { ...evento, conversation: undefined };
    const p1 = esperarProblema(await s.webhook(sistema, semConversa), 400);
    expect(p1.errors).toEqual(expect.arrayContaining([expect.objectContaining({ campo: 'conversation' })]));
    const statusDesconhecido = { ...evento, conversation: { ...evento.conversation, status: 'fechada' } };
    const campos = async (corpo: unknown) => esperarProblema(await s.webhook(sistema, corpo), 400).errors?.map((e: { campo: string }) => e.campo);
    expect(await campos(statusDesconhecido)).toEqual(['conversation.status']);
    expect(await campos({ ...evento, id: 'abc' })).toEqual(['id']);
    expect(await campos({ ...evento, created_at: 1e17 })).toEqual(['created_at']);
    expect(await campos({ ...evento, event: undefined })).toEqual(['event']);
    esperarProblema(await s.webhook(sistema, undefined, { raw: '{"event": ' }), 400);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
  });

  it('an event carrying more attachments or messages than the platform sends: a message is stored with its first attachments, in the order sent, and the rest are left out with a warning; more messages answer 400', async () => {
    const conversa = idDoSuporte();
    const sobra = 5;
    const enviados = Array.from({ length: ANEXOS_POR_MENSAGEM + sobra }, (_, i) => ({
      id: idDoSuporte(),
      data_url: `https://chat.example.com/rails/active_storage/anexo-${i}.png`,
      file_type: 'image',
    }));
    // the ones left out are not read, so not checked either
    const evento = { ...eventoDeMensagem({ conversa }), attachments: [...enviados.slice(0, -1), { id: 'não é número', data_url: 42 }] };
    mockRegistros.length = 0;
    const res = await s.webhook(sistema, evento);
    expect(res.status).toBe(200);
    expect(res.body.mensagens_novas).toBe(1);
    const [m] = await s.mensagens(res.body.conversa_id);
    expect(m.quantidade_anexos).toBe(ANEXOS_POR_MENSAGEM);
    expect(m.anexos.map((a: any) => a.endereco)).toEqual(enviados.slice(0, ANEXOS_POR_MENSAGEM).map((a) => a.data_url));
    expect(mockRegistros).toEqual([
      {
        nivel: 'warn',
        args: [
          expect.objectContaining({
            sistema: sistema.id,
            suporte_conversa_id: conversa,
            conversa_id: res.body.conversa_id,
            suporte_mensagem_id: evento.id,
            mensagem_id: m.id,
            gravados: ANEXOS_POR_MENSAGEM,
            deixados: sobra,
          }),
          expect.any(String),
        ],
      },
    ]);
    // repeated (Chatwoot repeats the last message in each conversation event): nothing recorded, nothing said
    await s.registrar(sistema, evento);
    const repetida = { ...mensagemAninhada({ id: evento.id, conversa, conteudo: evento.content, tipo: 0 }), attachments: enviados };
    await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa, mensagens: [repetida] }));
    expect(mockRegistros).toHaveLength(1);
    expect((await s.mensagens(res.body.conversa_id))[0].anexos).toHaveLength(ANEXOS_POR_MENSAGEM);

    // a message first seen in a conversation event is cut the same way
    const outra = { ...mensagemAninhada({ id: idDeMensagem(), conversa, conteudo: 'y', tipo: 0 }), attachments: enviados };
    expect((await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa, mensagens: [outra] }))).mensagens_novas).toBe(1);
    const daConversa = (await s.mensagens(res.body.conversa_id)).find((x: any) => x.suporte_mensagem_id === outra.id);
    expect(daConversa.anexos.map((a: any) => a.endereco)).toEqual(enviados.slice(0, ANEXOS_POR_MENSAGEM).map((a) => a.data_url));
    expect(mockRegistros).toHaveLength(2);

    // Chatwoot sends one message in a conversation event: more than MENSAGENS_POR_EVENTO is refused
    const outraConversa = idDoSuporte();
    const aninhadas = Array.from({ length: MENSAGENS_POR_EVENTO + 1 }, () => mensagemAninhada({ id: idDeMensagem(), conversa: outraConversa, conteudo: 'x', tipo: 0 }));
    const p = esperarProblema(await s.webhook(sistema, eventoDeConversa('conversation_updated', { conversa: outraConversa, mensagens: aninhadas })), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'messages' })]);
    expect(await Conversa.count({ where: { suporte_conversa_id: outraConversa } })).toBe(0);
    // at the limit, taken
    const r = await s.registrar(sistema, eventoDeConversa('conversation_updated', { conversa: outraConversa, mensagens: aninhadas.slice(1) }));
    expect(r.mensagens_novas).toBe(MENSAGENS_POR_EVENTO);
  });

  it("a message event is read from its top level: the conversation's copy of its messages is not checked again", async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa, conteudo: 'lida do topo' });
    // Chatwoot repeats the message inside conversation.messages; a copy the service does not read
    // cannot refuse the event
    const r = await s.registrar(sistema, { ...evento, conversation: { ...evento.conversation, messages: [{ id: 'não é número' }] } });
    expect(r.mensagens_novas).toBe(1);
    expect((await s.mensagens(r.conversa_id)).map((m: any) => m.conteudo)).toEqual(['lida do topo']);
  });
});

describe('DESIGN §10: X-Chatwoot-Signature when the system has an HMAC secret', () => {
  const segredo = 'segredo-do-webhook-123';
  let assinado: { id: string; token: string };

  beforeAll(async () => {
    assinado = await s.criarSistema('suporte', { segredo_hmac: segredo });
    expect(assinado).toMatchObject({ tem_segredo_hmac: true });
    expect(JSON.stringify(assinado)).not.toContain(segredo);
  });

  const enviar = (corpo: string, headers: Record<string, string>) => s.webhook(assinado, undefined, { raw: corpo, headers });

  it('the right signature of the exact bytes is taken', async () => {
    const corpo = JSON.stringify(eventoDeMensagem({ conversa: idDoSuporte() }));
    const carimbo = Math.floor(Date.now() / 1000);
    const r = await enviar(corpo, { 'x-chatwoot-timestamp': String(carimbo), 'x-chatwoot-signature': assinaturaDoChatwoot(segredo, carimbo, corpo) });
    expect(r.status).toBe(200);
    expect(r.body.mensagens_novas).toBe(1);
  });

  it('the signature is of the bytes as sent, not of the JSON they parse to: a body written as Rails writes it (escaped <, > and &, indented, keys in its own order, emoji) is taken', async () => {
    const conversa = idDoSuporte();
    const evento = eventoDeMensagem({ conversa, conteudo: 'preço <b>R$ 10</b> & frete 😀' });
    const corpo = JSON.stringify({ event: evento.event, ...evento }, null, 2)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\//g, '\\/');
    expect(corpo).not.toBe(JSON.stringify(JSON.parse(corpo)));
    const carimbo = Math.floor(Date.now() / 1000);
    const r = await enviar(corpo, { 'x-chatwoot-timestamp': String(carimbo), 'x-chatwoot-signature': assinaturaDoChatwoot(segredo, carimbo, corpo) });
    expect(r.status).toBe(200);
    expect((await s.mensagens(r.body.conversa_id)).map((m: any) => m.conteudo)).toEqual(['preço <b>R$ 10</b> & frete 😀']);
  });

  it('no signature, a wrong one, another body, or a timestamp over five minutes old answers 401 and stores nothing', async () => {
    const conversa = idDoSuporte();
    const corpo = JSON.stringify(eventoDeMensagem({ conversa }));
    const agora = Math.floor(Date.now() / 1000);
    esperarProblema(await enviar(corpo, {}), 401);
    esperarProblema(await enviar(corpo, { 'x-chatwoot-timestamp': String(agora), 'x-chatwoot-signature': assinaturaDoChatwoot('outro', agora, corpo) }), 401);
    esperarProblema(
      await enviar(corpo, { 'x-chatwoot-timestamp': String(agora), 'x-chatwoot-signature': assinaturaDoChatwoot(segredo, agora, `${corpo} `) }),
      401,
    );
    const velho = agora - 301;
    esperarProblema(await enviar(corpo, { 'x-chatwoot-timestamp': String(velho), 'x-chatwoot-signature': assinaturaDoChatwoot(segredo, velho, corpo) }), 401);
    expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
  });

  describe('a signed delivery is taken once: a copy within the five minutes is answered 200 and does nothing once the first is recorded, 503 while it is being recorded', () => {
    const assinados = (corpo: string, carimbo = Math.floor(Date.now() / 1000)) => ({
      'x-chatwoot-timestamp': String(carimbo),
      'x-chatwoot-signature': assinaturaDoChatwoot(segredo, carimbo, corpo),
    });
    /** The signed delivery's mark in Redis (entregaAssinada's key). */
    const marcaDe = (cabecalhos: Record<string, string>) => `${config().queuePrefix}:sales:assinatura:${assinado.id}:${cabecalhos['x-chatwoot-signature']}`;

    const marcas = async (sistemaId: string) => {
      const chaves: string[] = [];
      let cursor = '0';
      do {
        const [proximo, lote] = await redis('produtor').scan(cursor, 'MATCH', `${config().queuePrefix}:sales:assinatura:${sistemaId}:*`, 'COUNT', 1000);
        cursor = proximo;
        chaves.push(...lote);
      } while (cursor !== '0');
      return chaves;
    };

    it('a captured event sent again does not undo the status the team corrected since', async () => {
      const conversa = idDoSuporte();
      const corpo = JSON.stringify(eventoDeMensagem({ conversa, status: 'pending' }));
      const cabecalhos = assinados(corpo);
      const primeira = await enviar(corpo, cabecalhos);
      expect(primeira.status).toBe(200);
      expect(primeira.body.mensagens_novas).toBe(1);
      const id = primeira.body.conversa_id;
      expect((await s.api.patch(`/conversa/${id}`, { token: await s.admin(), body: { status: 'resolved' } })).status).toBe(200);

      const replay = await enviar(corpo, cabecalhos);
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ conversa_id: null, mensagens_novas: 0, ignorado: expect.any(String) });
      expect(await Conversa.findByPk(id)).toMatchObject({ status: 'resolved' });
      // the mark lasts as long as the timestamp stays within the window, and as long again for a
      // process whose clock is behind (below), no longer
      const restante = await redis('produtor').pttl(marcaDe(cabecalhos));
      expect(restante).toBeGreaterThan(590_000);
      expect(restante).toBeLessThanOrEqual(600_000);
    });

    it('the same event signed again by the platform (a new timestamp) is a new delivery', async () => {
      const conversa = idDoSuporte();
      const corpo = JSON.stringify(eventoDeMensagem({ conversa }));
      const agora = Math.floor(Date.now() / 1000);
      expect((await enviar(corpo, assinados(corpo, agora - 1))).body.mensagens_novas).toBe(1);
      const outra = await enviar(corpo, assinados(corpo, agora));
      expect(outra.status).toBe(200);
      expect(outra.body).toMatchObject({ conversa_id: expect.any(String), mensagens_novas: 0 });
      expect(outra.body.ignorado).toBeUndefined();
    });

    it('a delivery whose recording failed leaves no mark: the platform\'s retry of it is taken', async () => {
      const conversa = idDoSuporte();
      const corpo = JSON.stringify(eventoDeMensagem({ conversa }));
      const cabecalhos = assinados(corpo);
      const falha = jest.spyOn(registro, 'registrarEventoDoSuporte').mockRejectedValueOnce(new Error('banco caiu'));
      try {
        expect((await enviar(corpo, cabecalhos)).status).toBe(500);
      } finally {
        falha.mockRestore();
      }
      const denovo = await enviar(corpo, cabecalhos);
      expect(denovo.status).toBe(200);
      expect(denovo.body.mensagens_novas).toBe(1);
    });

    it('a delivery recorded by a process whose clock is ahead is still taken once by one on time, while that one takes its timestamp', async () => {
      const adiante = 10_000;
      const corpo = JSON.stringify(eventoDeMensagem({ conversa: idDoSuporte() }));
      // the process ahead takes this timestamp for under a second more; the one on time for 10 s more
      const agoraAdiante = Date.now() + adiante;
      const carimbo = Math.ceil(agoraAdiante / 1000) - TOLERANCIA_DO_CARIMBO_S;
      const cabecalhos = assinados(corpo, carimbo);
      const chamada = { corpoBruto: Buffer.from(corpo), assinatura: cabecalhos['x-chatwoot-signature'], carimbo: String(carimbo) };
      const doSistema = await autenticarWebhook(assinado.id, 'suporte', assinado.token);
      conferirAssinaturaDoWebhook(doSistema, chamada, agoraAdiante);
      const primeira = await receberEventoDoSuporte(doSistema, entregaAssinada(doSistema, chamada, agoraAdiante), JSON.parse(corpo));
      expect(primeira).toMatchObject({ mensagens_novas: 1 });
      // past the window's end on the clock ahead, within it on time
      await dormir(2100);
      const replay = await enviar(corpo, cabecalhos);
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual({ conversa_id: null, mensagens_novas: 0, ignorado: expect.any(String) });
    });

    /**
     * Holds the next recording inside registrar until `soltar` is called (with an error: it fails);
     * `entrou` settles once it is there, its mark already written.
     */
    function segurarProximaGravacao() {
      const original = registro.registrarEventoDoSuporte;
      let entrou!: () => void;
      const dentro = new Promise<void>((r) => (entrou = r));
      let soltar!: (erro?: Error) => void;
      const solta = new Promise<Error | undefined>((r) => (soltar = r));
      const espiao = jest.spyOn(registro, 'registrarEventoDoSuporte').mockImplementationOnce(async (...args) => {
        entrou();
        const erro = await solta;
        if (erro) throw erro;
        return original(...args);
      });
      return { dentro, soltar, restaurar: () => espiao.mockRestore() };
    }

    /** A new signed delivery whose first call is held inside registrar (its mark written): `soltar` lets it go on. */
    async function primeiraChamadaSegura() {
      const conversa = idDoSuporte();
      const corpo = JSON.stringify(eventoDeMensagem({ conversa }));
      const cabecalhos = assinados(corpo);
      const segura = segurarProximaGravacao();
      const primeira = enviar(corpo, cabecalhos);
      await segura.dentro;
      return { conversa, corpo, cabecalhos, primeira, soltar: segura.soltar, restaurar: segura.restaurar };
    }

    it('a copy arriving while the first is still being recorded answers 503 with Retry-After; once recorded, 200 ignorado, the mark keeping its end', async () => {
      const { conversa, corpo, cabecalhos, primeira, ...segura } = await primeiraChamadaSegura();
      try {
        expect(await redis('produtor').get(marcaDe(cabecalhos))).toMatch(/^em-andamento:/);
        // in progress, the mark lapses within a minute: a process that died here, or a mark set whose
        // answer was lost, does not keep the delivery's copies refused for the whole ten minutes
        expect(await redis('produtor').pttl(marcaDe(cabecalhos))).toBeLessThanOrEqual(PRAZO_DO_ANDAMENTO_MS);
        const copia = await enviar(corpo, cabecalhos);
        expect(esperarProblema(copia, 503)).toMatchObject({ code: 'em_andamento' });
        expect(copia.headers.get('retry-after')).toBe('2');
        expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(0);
        segura.soltar();
        expect(await primeira).toMatchObject({ status: 200, body: { mensagens_novas: 1 } });
      } finally {
        segura.soltar(new Error('not released'));
        segura.restaurar();
      }
      expect(await redis('produtor').get(marcaDe(cabecalhos))).toBe('feito');
      const restante = await redis('produtor').pttl(marcaDe(cabecalhos));
      expect(restante).toBeGreaterThan(590_000);
      expect(restante).toBeLessThanOrEqual(600_000);
      const depois = await enviar(corpo, cabecalhos);
      expect(depois.status).toBe(200);
      expect(depois.body).toEqual({ conversa_id: null, mensagens_novas: 0, ignorado: expect.any(String) });
    });

    it('a copy told to try again while the first was being recorded is taken when the first then fails', async () => {
      const { conversa, corpo, cabecalhos, primeira, ...segura } = await primeiraChamadaSegura();
      try {
        esperarProblema(await enviar(corpo, cabecalhos), 503);
        segura.soltar(new Error('banco caiu'));
        expect((await primeira).status).toBe(500);
      } finally {
        segura.restaurar();
      }
      expect(await redis('produtor').exists(marcaDe(cabecalhos))).toBe(0);
      const novaTentativa = await enviar(corpo, cabecalhos);
      expect(novaTentativa.status).toBe(200);
      expect(novaTentativa.body).toMatchObject({ conversa_id: expect.any(String), mensagens_novas: 1 });
      expect(await Conversa.count({ where: { suporte_conversa_id: conversa } })).toBe(1);
    });

    it('a system without an HMAC secret writes no mark: its deliveries are recorded as they come', async () => {
      const corpo = JSON.stringify(eventoDeMensagem({ conversa: idDoSuporte() }));
      for (let i = 0; i < 2; i++) expect((await s.webhook(sistema, undefined, { raw: corpo })).status).toBe(200);
      expect(await marcas(sistema.id)).toEqual([]);
    });
  });

  it('a body that is not JSON answers 401 when unsigned, 400 when its bytes are signed right', async () => {
    const corpo = '{"event": "message_created", ';
    const agora = Math.floor(Date.now() / 1000);
    esperarProblema(await enviar(corpo, {}), 401);
    esperarProblema(await enviar(corpo, { 'x-chatwoot-timestamp': String(agora), 'x-chatwoot-signature': assinaturaDoChatwoot('outro', agora, corpo) }), 401);
    esperarProblema(await enviar(corpo, { 'x-chatwoot-timestamp': String(agora), 'x-chatwoot-signature': assinaturaDoChatwoot(segredo, agora, corpo) }), 400);
  });
});
