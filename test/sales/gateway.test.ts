import { randomInt } from 'node:crypto';
import { chaveDoTelefone } from '../../api/sales/telefone';
import { banco, novaConexao } from '../../lib/database';
import { esperarOutraConexao, esperarTravaEsperada } from '../helpers/espera';
import { ContatoGateway } from '../../models/sales';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { eventoDeConversa, eventoDeMensagem, eventoDoGateway, fixture, idDoSuporte, novoContato, Sales, salesDe } from './apoio';

let suite: SuiteDeTeste;
let s: Sales;
let suporte: { id: string; token: string };
let gateway: { id: string; token: string; nome?: unknown };
let mensageiro: { id: string; token: string; nome?: unknown };
const NUMERO_DO_MENSAGEIRO = '+55 11 98888-7777';

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales'], { workers: false });
  s = salesDe(suite);
  suporte = await s.criarSistema('suporte');
  gateway = await s.criarSistema('gateway', { nome: 'Evolution vendas' });
  mensageiro = await s.criarSistema('mensageiro', { nome: 'WhatsApp vendas', numero: NUMERO_DO_MENSAGEIRO });
});

afterAll(() => suite?.encerrar());

const novoTelefone = () => `+55 11 9${randomInt(1000, 9999)}-${randomInt(1000, 9999)}`;

/** The gateway's event of a message `telefone` sent through `numero`, stamped `segundos` (its messageTimestamp). */
function enviadaEm(telefone: string, numero: string, segundos: unknown) {
  const e = eventoDoGateway(telefone, numero);
  return { ...e, data: { ...e.data, messageTimestamp: segundos } };
}

async function conversaCom(telefone: string, status = 'pending') {
  const conversa = idDoSuporte();
  await s.registrar(suporte, eventoDeMensagem({ conversa, contato: novoContato({ telefone }), status }));
  return conversa;
}

/**
 * A new phone with a running conversation, a second messaging number `outroNumero` configured, and
 * `em(numero, segundos)`: the gateway's event of a message of that phone through `numero`, stamped.
 */
async function telefoneComOutroMensageiro(outroNumero: string) {
  const telefone = novoTelefone();
  const conversa = await conversaCom(telefone);
  const outro = await s.criarSistema('mensageiro', { numero: outroNumero });
  const em = (numero: string, segundos: unknown) => enviadaEm(telefone, numero, segundos);
  return { telefone, conversa, outro, em };
}

describe('DESIGN §7: the gateway\'s messages.upsert links the phone\'s conversations to the gateway and the messaging number', () => {
  it('a running conversation of that phone gets both ids and names; a resolved one keeps its history', async () => {
    const telefone = novoTelefone();
    const andamento = await conversaCom(telefone, 'open');
    const resolvida = await conversaCom(telefone, 'resolved');
    const res = await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ conversas_vinculadas: 1 });
    expect(await s.conversaDoSuporte(andamento)).toMatchObject({
      config_system_gateway_id: gateway.id,
      config_system_gateway_nome: 'Evolution vendas',
      config_system_mensageiro_id: mensageiro.id,
      config_system_mensageiro_nome: 'WhatsApp vendas',
    });
    expect(await s.conversaDoSuporte(resolvida)).toMatchObject({ config_system_gateway_id: null, config_system_mensageiro_id: null });
    // the filter by gateway (SPEC 4.6 rule 4, exact value): this conversation, not its unlinked sibling, and none of another gateway
    const filtro = await s.api.get('/conversa/filtro', { token: await s.admin(), query: { config_system_gateway_id: gateway.id } });
    const encontradas = filtro.body.map((c: any) => c.suporte_conversa_id);
    expect(encontradas).toContain(andamento);
    expect(encontradas).not.toContain(resolvida);
    expect(filtro.body.every((c: any) => c.config_system_gateway_id === gateway.id)).toBe(true);
  });

  it('a resolved conversation that reopens takes the link the gateway gave its phone meanwhile (the contact came back on another number)', async () => {
    const telefone = novoTelefone();
    const contato = novoContato({ telefone });
    const conversa = idDoSuporte();
    await s.registrar(suporte, eventoDeMensagem({ conversa, contato, status: 'open' }));
    await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_mensageiro_id: mensageiro.id });
    await s.registrar(suporte, eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'resolved' }));
    // the contact writes again, on the company's other number: the gateway's event comes first
    const outroNumero = '+55 11 97777-6666';
    const outro = await s.criarSistema('mensageiro', { nome: 'WhatsApp suporte', numero: outroNumero });
    expect((await s.gateway(gateway, eventoDoGateway(telefone, outroNumero))).body).toEqual({ conversas_vinculadas: 0 });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'resolved', config_system_mensageiro_id: mensageiro.id });
    await s.registrar(suporte, eventoDeConversa('conversation_status_changed', { conversa, contato, status: 'open' }));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ status: 'open', config_system_gateway_id: gateway.id, config_system_mensageiro_id: outro.id });
    // while it runs, a copy that changes neither status nor phone keeps the link it has
    await s.registrar(suporte, eventoDeMensagem({ conversa, contato, status: 'open' }));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_mensageiro_id: outro.id });
  });

  it("a conversation whose contact's phone changes takes the new phone's link, where the gateway knows one", async () => {
    const [antigo, novo] = [novoTelefone(), novoTelefone()];
    const conversa = idDoSuporte();
    const contato = novoContato({ telefone: antigo });
    await s.registrar(suporte, eventoDeMensagem({ conversa, contato, status: 'open' }));
    await s.gateway(gateway, eventoDoGateway(antigo, NUMERO_DO_MENSAGEIRO));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id });
    const outroGateway = await s.criarSistema('gateway', { nome: 'Evolution suporte' });
    await s.gateway(outroGateway, eventoDoGateway(novo, NUMERO_DO_MENSAGEIRO));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id });
    await s.registrar(suporte, eventoDeConversa('conversation_updated', { conversa, contato: { ...contato, telefone: novo }, status: 'open' }));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ contato_telefone: novo, config_system_gateway_id: outroGateway.id });
  });

  it('a conversation the chat platform creates later for that phone starts linked', async () => {
    const telefone = novoTelefone();
    expect((await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO))).body).toEqual({ conversas_vinculadas: 0 });
    const conversa = await conversaCom(telefone);
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: mensageiro.id });
    const criada = idDoSuporte();
    await s.registrar(suporte, eventoDeConversa('conversation_created', { conversa: criada, contato: novoContato({ telefone }) }));
    expect(await s.conversaDoSuporte(criada)).toMatchObject({ config_system_gateway_id: gateway.id });
  });

  it('a gateway or messaging number deleted since is linked to no conversation created after; those linked before keep it (DESIGN §4)', async () => {
    const admin = await s.admin();
    const gatewayApagado = await s.criarSistema('gateway');
    const numero = `+55 11 9${randomInt(1000, 9999)}-${randomInt(1000, 9999)}`;
    const mensageiroApagado = await s.criarSistema('mensageiro', { numero });
    const telefone = novoTelefone();
    expect((await s.gateway(gatewayApagado, eventoDoGateway(telefone, numero))).status).toBe(200);
    const antes = await conversaCom(telefone);
    expect(await s.conversaDoSuporte(antes)).toMatchObject({ config_system_gateway_id: gatewayApagado.id, config_system_mensageiro_id: mensageiroApagado.id });

    expect((await s.api.del(`/config_system/${mensageiroApagado.id}`, { token: admin })).status).toBe(204);
    const semMensageiro = await conversaCom(telefone);
    expect(await s.conversaDoSuporte(semMensageiro)).toMatchObject({ config_system_gateway_id: gatewayApagado.id, config_system_mensageiro_id: null });

    expect((await s.api.del(`/config_system/${gatewayApagado.id}`, { token: admin })).status).toBe(204);
    const semGateway = await conversaCom(telefone);
    expect(await s.conversaDoSuporte(semGateway)).toMatchObject({ config_system_gateway_id: null, config_system_mensageiro_id: null });
    // one reopening keeps the link it had (none is there to replace it)
    await s.registrar(suporte, eventoDeMensagem({ conversa: semMensageiro, contato: novoContato({ telefone }), status: 'resolved' }));
    await s.registrar(suporte, eventoDeMensagem({ conversa: semMensageiro, contato: novoContato({ telefone }), status: 'open' }));
    expect(await s.conversaDoSuporte(semMensageiro)).toMatchObject({ config_system_gateway_id: gatewayApagado.id });
    expect(await s.conversaDoSuporte(antes)).toMatchObject({ config_system_gateway_id: gatewayApagado.id, config_system_mensageiro_id: mensageiroApagado.id });
  });

  it('a deadlock with another writer of the same rows is retried: the link is kept, not answered 500', async () => {
    const telefone = novoTelefone();
    const conversas = [await conversaCom(telefone, 'open'), await conversaCom(telefone, 'open')];
    // the gateway locks the phone's conversations in the index's order: by id
    const [primeira, segunda] = (await Promise.all(conversas.map((c) => s.conversaDoSuporte(c)))).map((c) => c.id as string).sort();
    const outro = await novaConexao('sales');
    try {
      // another writer holds the second conversation and, having written more, is the one the database keeps
      await outro.beginTransaction();
      await outro.query('SELECT id FROM conversa WHERE id = ? FOR UPDATE', [segunda]);
      await outro.query('INSERT INTO contato_gateway (telefone_chave, config_system_gateway_id, atualizado_em) VALUES ?', [
        Array.from({ length: 30 }, () => [`teste-${randomInt(1e9)}`, gateway.id, new Date()]),
      ]);
      const res = s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO));
      await esperarTravaEsperada(outro, 'the gateway holding the first conversation, waiting on the second');
      // then waits on the first: a deadlock, the gateway's transaction rolled back
      await outro.query('SELECT id FROM conversa WHERE id = ? FOR UPDATE', [primeira]);
      await outro.commit();
      expect((await res).body).toEqual({ conversas_vinculadas: 2 });
    } finally {
      await outro.end();
    }
    for (const conversa of conversas) {
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: mensageiro.id });
    }
  });

  it("a phone seen for the first time by two events at once, both past their read: the older message's, writing second, changes nothing", async () => {
    const telefone = novoTelefone();
    const conversa = await conversaCom(telefone, 'open');
    const outro = await s.criarSistema('mensageiro', { numero: '+55 11 96666-3333' });
    const agora = Math.floor(Date.now() / 1000);
    const conexao = await novaConexao('sales');
    try {
      // the newer message's writer: a lock on the gap where the phone's row goes holds the older
      // event's write of it after whatever that event read (its reads take no gap locks); then the
      // newer link is stored
      await conexao.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await conexao.beginTransaction();
      await conexao.query('SELECT * FROM contato_gateway WHERE telefone_chave = ? FOR UPDATE', [chaveDoTelefone(telefone)]);
      const antigo = s.gateway(gateway, enviadaEm(telefone, NUMERO_DO_MENSAGEIRO, agora - 60));
      await esperarOutraConexao(conexao, "the older message's event waiting to write the phone's link", ['%INTO contato_gateway%']);
      await conexao.query(
        'INSERT INTO contato_gateway (telefone_chave, config_system_gateway_id, config_system_mensageiro_id, mensagem_em, atualizado_em) VALUES (?, ?, ?, ?, NOW(3))',
        [chaveDoTelefone(telefone), gateway.id, outro.id, new Date((agora - 10) * 1000)],
      );
      await conexao.commit();
      expect((await antigo).body).toEqual({ conversas_vinculadas: 0, ignorado: expect.any(String) });
    } finally {
      await conexao.end();
    }
    expect(await ContatoGateway.findByPk(chaveDoTelefone(telefone))).toMatchObject({ config_system_mensageiro_id: outro.id });
    expect((await s.conversaDoSuporte(conversa)).config_system_mensageiro_id).not.toBe(mensageiro.id);
  });

  it('a Brazilian mobile matches with or without its ninth digit', async () => {
    // an old mobile's eight digits began with 6 to 9
    const oitoDigitos = `${randomInt(6000, 9999)}${randomInt(1000, 9999)}`;
    const conversa = await conversaCom(`+55 21 9${oitoDigitos}`);
    const res = await s.gateway(gateway, eventoDoGateway(`5521${oitoDigitos}`, NUMERO_DO_MENSAGEIRO));
    expect(res.body).toEqual({ conversas_vinculadas: 1 });
    expect((await s.conversaDoSuporte(conversa)).config_system_gateway_id).toBe(gateway.id);
  });

  it('a landline is not a mobile without its ninth digit: the gateway of 55 21 9 3xxx-xxxx does not link 55 21 3xxx-xxxx, nor the reverse', async () => {
    const oitoDigitos = `${randomInt(2000, 5999)}${randomInt(1000, 9999)}`;
    const fixo = await conversaCom(`+55 21 ${oitoDigitos}`);
    const celular = await conversaCom(`+55 21 9${oitoDigitos}`);
    expect((await s.gateway(gateway, eventoDoGateway(`55219${oitoDigitos}`, NUMERO_DO_MENSAGEIRO))).body).toEqual({ conversas_vinculadas: 1 });
    expect((await s.conversaDoSuporte(celular)).config_system_gateway_id).toBe(gateway.id);
    expect((await s.conversaDoSuporte(fixo)).config_system_gateway_id).toBeNull();
    // a conversation of the landline created later does not start linked to the mobile's gateway
    const depois = await conversaCom(`+55 21 ${oitoDigitos}`);
    expect((await s.conversaDoSuporte(depois)).config_system_gateway_id).toBeNull();
    const outro = await s.criarSistema('gateway');
    expect((await s.gateway(outro, eventoDoGateway(`5521${oitoDigitos}`, NUMERO_DO_MENSAGEIRO))).body).toEqual({ conversas_vinculadas: 2 });
    expect((await s.conversaDoSuporte(celular)).config_system_gateway_id).toBe(gateway.id);
  });

  it('migration 0005 forgets the links kept under a landline-like key, and brings stored message times to whole seconds', async () => {
    const sales = banco('sales');
    const oitoDigitos = `${randomInt(2000, 5999)}${randomInt(1000, 9999)}`;
    const antigo = `5531${oitoDigitos}`;
    const celular = `5531${randomInt(6000, 9999)}${randomInt(1000, 9999)}`;
    for (const chave of [antigo, celular]) {
      await sales.query('INSERT INTO contato_gateway (telefone_chave, config_system_gateway_id, atualizado_em) VALUES (?, ?, NOW(3))', {
        replacements: [chave, gateway.id],
      });
    }
    const conversa = await s.conversaDoSuporte(await conversaCom(novoTelefone()));
    await sales.query("UPDATE conversa SET ultima_mensagem_em = '2026-05-05 05:05:05.123', ultima_mensagem_do_contato_em = '2026-05-05 05:05:04.999' WHERE id = ?", {
      replacements: [conversa.id],
    });
    await sales.query("UPDATE conversa_mensagem SET criada_em = '2026-05-05 05:05:05.123' WHERE conversa_id = ?", { replacements: [conversa.id] });

    await MIGRACOES_SALES.find((m) => m.name === '0005-sales-segundos-e-telefones')!.up(sales.getQueryInterface());
    expect(await ContatoGateway.findByPk(antigo)).toBeNull();
    expect(await ContatoGateway.findByPk(celular)).not.toBeNull();
    expect(await s.conversaDoSuporte(conversa.suporte_conversa_id)).toMatchObject({
      ultima_mensagem_em: '2026-05-05T05:05:05.000Z',
      ultima_mensagem_do_contato_em: '2026-05-05T05:05:04.000Z',
      ultima_mensagem_do_robo_em: null,
    });
    expect((await s.mensagens(conversa.id))[0].criada_em).toBe('2026-05-05T05:05:05.000Z');
  });

  it('a number no messaging system has links the gateway alone; another gateway later takes over', async () => {
    const telefone = novoTelefone();
    const conversa = await conversaCom(telefone);
    await s.gateway(gateway, eventoDoGateway(telefone, '+55 11 90000-0000'));
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: null });
    const outro = await s.criarSistema('gateway');
    expect((await s.gateway(outro, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO))).body).toEqual({ conversas_vinculadas: 1 });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: outro.id, config_system_mensageiro_id: mensageiro.id });
    expect((await s.gateway(outro, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO))).body).toEqual({ conversas_vinculadas: 0 });
  });

  it("an older message's event arriving after a newer one's (two instances send apart) leaves the phone on the newer one's number; one that does not say when applies, as before", async () => {
    const outroNumero = '+55 11 96666-5555';
    const { telefone, conversa, outro, em } = await telefoneComOutroMensageiro(outroNumero);
    expect((await s.gateway(gateway, em(outroNumero, 1_700_000_200))).body).toEqual({ conversas_vinculadas: 1 });
    const tardio = await s.gateway(gateway, em(NUMERO_DO_MENSAGEIRO, 1_700_000_100));
    expect(tardio.body).toEqual({ conversas_vinculadas: 0, ignorado: expect.any(String) });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_mensageiro_id: outro.id });
    expect(await ContatoGateway.findByPk(chaveDoTelefone(telefone))).toMatchObject({ config_system_mensageiro_id: outro.id });
    // the same second, a later one, or one without a time (or with one that is no time): applied in arrival order
    expect((await s.gateway(gateway, em(NUMERO_DO_MENSAGEIRO, '1700000200'))).body).toEqual({ conversas_vinculadas: 1 });
    expect((await s.gateway(gateway, em(outroNumero, undefined))).body).toEqual({ conversas_vinculadas: 1 });
    expect((await s.gateway(gateway, em(NUMERO_DO_MENSAGEIRO, { low: 5, high: 0 }))).body).toEqual({ conversas_vinculadas: 1 });
    expect((await s.gateway(gateway, em(outroNumero, 1_700_000_300))).body).toEqual({ conversas_vinculadas: 1 });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_mensageiro_id: outro.id });
  });

  it('a messageTimestamp more than ten minutes ahead of the server\'s clock orders nothing: the event links in arrival order, later messages still move the phone, and none too large for a date fails', async () => {
    const outroNumero = '+55 11 96666-4444';
    const { telefone, conversa, outro, em } = await telefoneComOutroMensageiro(outroNumero);
    const agora = Math.floor(Date.now() / 1000);
    for (const adiante of [agora + 86_400, 253402300799, 9_000_000_000_000_000, '999999999999']) {
      expect((await s.gateway(gateway, em(outroNumero, adiante))).body).toEqual({ conversas_vinculadas: 1 });
      expect(await ContatoGateway.findByPk(chaveDoTelefone(telefone))).toMatchObject({ config_system_mensageiro_id: outro.id });
      expect((await s.gateway(gateway, em(NUMERO_DO_MENSAGEIRO, agora - 60))).body).toEqual({ conversas_vinculadas: 1 });
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_mensageiro_id: mensageiro.id });
    }
  });

  it('an event without sender (absent, null, empty or not a phone) leaves the stored messaging number as it was, for the phone and its conversations', async () => {
    const telefone = novoTelefone();
    const conversa = await conversaCom(telefone, 'open');
    expect((await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO))).body).toEqual({ conversas_vinculadas: 1 });
    const outro = await s.criarSistema('gateway');
    for (const sender of [undefined, null, '', '103899771998284@lid']) {
      const evento: any = eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO);
      if (sender === undefined) delete evento.sender;
      else evento.sender = sender;
      expect((await s.gateway(gateway, evento)).status).toBe(200);
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: mensageiro.id });
      expect(await ContatoGateway.findByPk(chaveDoTelefone(telefone))).toMatchObject({ config_system_mensageiro_id: mensageiro.id });
    }
    // the gateway, which the address names, is still taken from an event without sender
    const semSender: any = eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO);
    delete semSender.sender;
    expect((await s.gateway(outro, semSender)).body).toEqual({ conversas_vinculadas: 1 });
    expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: outro.id, config_system_mensageiro_id: mensageiro.id });
    expect(await ContatoGateway.findByPk(chaveDoTelefone(telefone))).toMatchObject({
      config_system_gateway_id: outro.id,
      config_system_mensageiro_id: mensageiro.id,
    });
    // a phone first seen without sender is linked to the gateway alone, and starts its conversations so
    const novo = novoTelefone();
    const primeiro: any = eventoDoGateway(novo, NUMERO_DO_MENSAGEIRO);
    delete primeiro.sender;
    expect((await s.gateway(gateway, primeiro)).status).toBe(200);
    expect(await s.conversaDoSuporte(await conversaCom(novo))).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: null });
  });

  it('the constructed Evolution sample is taken; the upper-case event name too', async () => {
    const amostra = fixture('constructed', 'evolution_messages_upsert_text.json');
    expect((await s.gateway(gateway, amostra)).status).toBe(200);
    expect(await ContatoGateway.findByPk('551199990000')).toMatchObject({ config_system_gateway_id: gateway.id });
    // written as Evolution's own configuration names it, for a number not seen yet
    const telefone = novoTelefone();
    const maiusculas = await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO, 'MESSAGES_UPSERT'));
    expect(maiusculas.status).toBe(200);
    expect(maiusculas.body.ignorado).toBeUndefined();
    expect(await ContatoGateway.findByPk(chaveDoTelefone(telefone))).toMatchObject({ config_system_gateway_id: gateway.id });
  });

  it('a contact named by a LID links through the phone id beside it (remoteJidAlt, or senderPn of older versions); a LID alone is ignored', async () => {
    for (const campo of ['remoteJidAlt', 'senderPn']) {
      const telefone = novoTelefone();
      const conversa = await conversaCom(telefone, 'open');
      const evento = eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO);
      const doTelefone = evento.data.key.remoteJid;
      evento.data.key = { ...evento.data.key, remoteJid: '103899771998284@lid', [campo]: doTelefone };
      expect((await s.gateway(gateway, evento)).body).toEqual({ conversas_vinculadas: 1 });
      expect(await s.conversaDoSuporte(conversa)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: mensageiro.id });
    }
    const antes = await ContatoGateway.count();
    const soLid = eventoDoGateway(novoTelefone(), NUMERO_DO_MENSAGEIRO);
    soLid.data.key.remoteJid = '13718@lid';
    expect((await s.gateway(gateway, soLid)).body).toEqual({ conversas_vinculadas: 0, ignorado: expect.any(String) });
    // only a LID is stood in for: a group's message naming a phone beside it stays a group's
    const grupo = eventoDoGateway(novoTelefone(), NUMERO_DO_MENSAGEIRO);
    grupo.data.key = { ...grupo.data.key, remoteJid: '120363025246125888@g.us', remoteJidAlt: grupo.data.key.remoteJid };
    expect((await s.gateway(gateway, grupo)).body).toEqual({ conversas_vinculadas: 0, ignorado: expect.any(String) });
    expect(await ContatoGateway.count()).toBe(antes);
  });

  it('the gateway\'s other events, whatever their data, are answered 200 and ignored', async () => {
    const conexao = { event: 'connection.update', instance: 'vendas-01', data: { state: 'open', statusReason: 200 } };
    expect((await s.gateway(gateway, conexao)).body).toEqual({ conversas_vinculadas: 0, ignorado: expect.stringContaining('connection.update') });
    expect((await s.gateway(gateway, { event: 'QRCODE_UPDATED', data: { qrcode: { base64: 'x' } } })).status).toBe(200);
  });

  it('groups, broadcasts and other events change nothing', async () => {
    const antes = await ContatoGateway.count();
    const grupo = eventoDoGateway(novoTelefone(), NUMERO_DO_MENSAGEIRO);
    grupo.data.key.remoteJid = '120363025246125888@g.us';
    expect((await s.gateway(gateway, grupo)).body).toEqual({ conversas_vinculadas: 0, ignorado: expect.any(String) });
    const status = eventoDoGateway(novoTelefone(), NUMERO_DO_MENSAGEIRO, 'connection.update');
    expect((await s.gateway(gateway, status)).body).toEqual({ conversas_vinculadas: 0, ignorado: expect.stringContaining('connection.update') });
    expect(await ContatoGateway.count()).toBe(antes);
  });

  it('with "Webhook by Events" on, the gateway appends the event to the address after its query: taken all the same; a wrong token so sent is still 401', async () => {
    const telefone = novoTelefone();
    const andamento = await conversaCom(telefone, 'open');
    const res = await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO), `${gateway.token}/messages-upsert`);
    expect(res.status).toBe(200);
    expect(await s.conversaDoSuporte(andamento)).toMatchObject({ config_system_gateway_id: gateway.id, config_system_mensageiro_id: mensageiro.id });
    esperarProblema(await s.gateway(gateway, eventoDoGateway(telefone, NUMERO_DO_MENSAGEIRO), `x${gateway.token}/messages-upsert`), 401);
  });

  it('the token of the gateway system is required (401), and a system of another type authenticates nobody here (401); a malformed event 400', async () => {
    const evento = eventoDoGateway(novoTelefone(), NUMERO_DO_MENSAGEIRO);
    esperarProblema(await s.gateway(gateway, evento, 'outro-token-qualquer-1234'), 401);
    const semToken = await s.gateway(gateway, evento, '');
    esperarProblema(semToken, 401);
    expect(semToken.headers.get('www-authenticate')).toBe('Query-Token name="token"');
    esperarProblema(await s.gateway(suporte, evento), 401);
    esperarProblema(await s.gateway(gateway, { event: 'messages.upsert', data: {} }), 400);
  });
});
