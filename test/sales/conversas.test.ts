import nock from 'nock';
import { v7 as uuidv7 } from 'uuid';
import { compactarContagem } from '../../api/sales/contagem';
import { deletarConversa, PRAZO_DO_FILTRO_S } from '../../api/sales/conversas';
import * as database from '../../lib/database';
import { banco, novaConexao } from '../../lib/database';
import { AnexoDaMensagem, Conversa, ConversaMensagem } from '../../models/sales';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { dormir, esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DA_CONVERSA, CHAT, eventoDeConversa, eventoDeMensagem, idDoSuporte, novoContato, RFC3339, Sales, salesDe, unico } from './apoio';

let suite: SuiteDeTeste;
let s: Sales;
let sistema: { id: string; token: string };
let admin: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales', 'files']);
  s = salesDe(suite);
  sistema = await s.criarSistema('suporte');
  admin = await s.admin();
});

afterAll(() => suite?.encerrar());

/** A conversation of the chat platform whose last message was sent at `em`. */
async function conversa(o: { em?: Date; status?: string; conteudo?: string; contato?: ReturnType<typeof novoContato> } = {}) {
  const suporteConversaId = idDoSuporte();
  const r = await s.registrar(
    sistema,
    eventoDeMensagem({ conversa: suporteConversaId, status: o.status, criadaEm: o.em, conteudo: o.conteudo, contato: o.contato }),
  );
  return { id: r.conversa_id as string, suporteConversaId };
}

/** SPEC 4.6 rules 1 and 4: most recent last message first; a conversation without messages last. */
const recentesPrimeiro = (datas: (string | null)[]) => [...datas].sort((a, b) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? 1 : -1));

const get = (caminho: string, query?: Record<string, string | number>, token = admin) => s.api.get(caminho, { token, query });

describe('SPEC 4.6 rule 1: GET /conversa', () => {
  it('pages of exactly 50, most recent last message first, `tamanho` ignored, `total` of the live ones', async () => {
    const base = Date.parse('2026-01-01T00:00:00Z');
    // sent in an order unlike their creation (23 and 55 coprime: each minute once), so an order by
    // id or by creation is not taken for one by last message
    for (let i = 0; i < 55; i++) await conversa({ em: new Date(base + ((i * 23) % 55) * 60_000), status: i % 2 ? 'open' : 'pending' });
    const vivas = await Conversa.count();

    const p1 = await get('/conversa', { tamanho: 5 });
    expect(p1.status).toBe(200);
    expect(p1.body).toEqual({ itens: expect.any(Array), pagina: 1, tamanho: 50, total: vivas });
    expect(p1.body.itens).toHaveLength(50);
    for (const item of p1.body.itens) expect(Object.keys(item).sort()).toEqual(CAMPOS_DA_CONVERSA);

    const todas = [...p1.body.itens];
    for (let pagina = 2; pagina <= Math.ceil(vivas / 50); pagina++) todas.push(...(await get('/conversa', { pagina })).body.itens);
    expect(todas).toHaveLength(vivas);
    const datas = todas.map((c) => c.ultima_mensagem_em);
    expect(datas).toEqual(recentesPrimeiro(datas));

    const pagina0 = (await get('/conversa', { pagina: 0 })).body;
    expect(pagina0.pagina).toBe(1);
    expect(pagina0.itens.map((c: any) => c.id)).toEqual(p1.body.itens.map((c: any) => c.id));
    expect((await get('/conversa', { pagina: 99 })).body.itens).toEqual([]);
  });

  it('a conversation the platform opened with no message yet is listed after every one that has messages', async () => {
    const vazia = idDoSuporte();
    const r = await s.registrar(sistema, eventoDeConversa('conversation_created', { conversa: vazia }));
    await conversa({ em: new Date('2020-01-01T00:00:00Z') });
    const todas: any[] = [];
    for (let pagina = 1; ; pagina++) {
      const { itens } = (await get('/conversa', { pagina })).body;
      if (!itens.length) break;
      todas.push(...itens);
    }
    const posicao = todas.findIndex((c) => c.id === r.conversa_id);
    expect(todas[posicao].ultima_mensagem_em).toBeNull();
    // every conversation with a message, the oldest included, comes before it
    expect(todas.slice(posicao).every((c) => c.ultima_mensagem_em === null)).toBe(true);
  });

  it('conversations whose last messages share one time are each listed once, by id (descending) among them, across pages and in the filter', async () => {
    // a time in the past no other test uses (one ahead of the clock is brought back to it, tempos.ts)
    const em = new Date('2025-06-01T12:00:00Z');
    const nome = unico('Empate');
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push((await conversa({ em, contato: novoContato({ nome }) })).id);
    const porId = [...ids].sort().reverse();
    // more than a page of them: every page, in order, holds them together
    const todas: { id: string; ultima_mensagem_em: string }[] = [];
    const { total } = (await get('/conversa')).body;
    for (let pagina = 1; pagina <= Math.ceil(total / 50); pagina++) todas.push(...(await get('/conversa', { pagina })).body.itens);
    const inicio = todas.findIndex((c) => c.ultima_mensagem_em === em.toISOString());
    expect(todas.filter((c) => c.ultima_mensagem_em === em.toISOString())).toHaveLength(53);
    expect(todas.slice(inicio, inicio + 53).map((c) => c.id)).toEqual(porId);
    expect((await get('/conversa/filtro', { contato: nome })).body.map((c: any) => c.id)).toEqual(porId);
    // the autocomplete: by contact name, then by id (ascending) among the same name
    const nomes = await get('/conversa/autocomplete', { busca: nome, tamanho: 100 });
    expect(nomes.body.itens.map((c: any) => c.id)).toEqual([...porId].reverse());
  });

  it('`status` limits the list to one status, and `total` counts that status', async () => {
    // the most recent of all, so both are on the first page of a listing that would show them
    const aberta = await conversa({ status: 'open' });
    const pendente = await conversa({ status: 'pending' });
    const res = await get('/conversa', { status: 'open' });
    expect(res.body.total).toBe(await Conversa.count({ where: { status: 'open' } }));
    const ids = res.body.itens.map((c: any) => c.id);
    expect(ids).toContain(aberta.id);
    expect(ids).not.toContain(pendente.id);
    expect(res.body.itens.every((c: any) => c.status === 'open')).toBe(true);
  });

  it('a deleted conversation is neither listed nor counted', async () => {
    const c = await conversa({ em: new Date('2030-01-01T00:00:00Z') });
    const antes = await get('/conversa');
    expect(antes.body.itens[0].id).toBe(c.id);
    expect((await s.api.del(`/conversa/${c.id}`, { token: admin })).status).toBe(204);
    const depois = await get('/conversa');
    expect(depois.body.total).toBe(antes.body.total - 1);
    expect(depois.body.itens.map((i: any) => i.id)).not.toContain(c.id);
  });

  it('a deleted conversation is gone from the filter, by every field, and from the autocomplete (SPEC §3, DESIGN §4)', async () => {
    const tag = unico('Apagada');
    const cliente = await s.criar('cliente', { razao_social: `${tag} Ltda` });
    const c = await conversa({ contato: novoContato({ nome: `${tag} Contato` }), conteudo: `${tag} texto` });
    expect((await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: cliente.id } })).status).toBe(200);
    const consultas: Record<string, string | number>[] = [
      { suporte_conversa_id: c.suporteConversaId },
      { cliente_id: cliente.id },
      { contato: tag },
      { texto: `${tag} texto` },
    ];
    for (const query of consultas) expect((await get('/conversa/filtro', query)).body.map((i: any) => i.id)).toEqual([c.id]);
    expect((await get('/conversa/autocomplete', { busca: tag })).body).toMatchObject({ total: 1, itens: [expect.objectContaining({ id: c.id })] });

    expect((await s.api.del(`/conversa/${c.id}`, { token: admin })).status).toBe(204);
    for (const query of consultas) expect((await get('/conversa/filtro', query)).body).toEqual([]);
    expect((await get('/conversa/autocomplete', { busca: tag })).body).toMatchObject({ total: 0, itens: [] });
  });

  it('the total stays exact through status changes, deletions and the consolidation of the counts', async () => {
    const porStatus = async () => {
      const r: Record<string, number> = {};
      for (const status of ['pending', 'open', 'resolved', 'snoozed']) r[status] = (await get('/conversa', { status })).body.total;
      return r;
    };
    const contadas = async () => {
      const r: Record<string, number> = { pending: 0, open: 0, resolved: 0, snoozed: 0 };
      for (const status of Object.keys(r)) r[status] = await Conversa.count({ where: { status } });
      return r;
    };
    const antes = await porStatus();
    const a = await conversa({ status: 'pending' });
    expect((await s.api.patch(`/conversa/${a.id}`, { token: admin, body: { status: 'snoozed' } })).status).toBe(200);
    const b = await conversa({ status: 'open' });
    expect((await s.api.del(`/conversa/${b.id}`, { token: admin })).status).toBe(204);
    const depois = await porStatus();
    expect(depois).toEqual({ ...antes, snoozed: antes.snoozed + 1 });
    expect(depois).toEqual(await contadas());
    expect(await compactarContagem()).toBeGreaterThan(0);
    expect(await compactarContagem()).toBe(0);
    expect(await porStatus()).toEqual(await contadas());
    expect((await get('/conversa')).body.total).toBe(await Conversa.count());
  });

  it('a backlog of deltas is folded in transactions of a bounded size, each delta once', async () => {
    for (let i = 0; i < 5; i++) await conversa({ status: 'pending' });
    const [[{ n }]] = (await banco('sales').query('SELECT COUNT(*) AS n FROM conversa_contagem_delta')) as [[{ n: number }], unknown];
    expect(Number(n)).toBeGreaterThanOrEqual(5);
    const transacoes = jest.spyOn(database, 'emTransacao');
    try {
      expect(await compactarContagem(2)).toBe(Number(n));
      // two deltas each, and the last one finding fewer
      expect(transacoes).toHaveBeenCalledTimes(Math.floor(Number(n) / 2) + 1);
    } finally {
      transacoes.mockRestore();
    }
    expect(await compactarContagem(2)).toBe(0);
    expect((await get('/conversa', { status: 'pending' })).body.total).toBe(await Conversa.count({ where: { status: 'pending' } }));
  });

  it('a backlog reports its count after each transaction, and a shutdown stops it between two, the rest left for the next run', async () => {
    for (let i = 0; i < 5; i++) await conversa({ status: 'pending' });
    const [[{ n }]] = (await banco('sales').query('SELECT COUNT(*) AS n FROM conversa_contagem_delta')) as [[{ n: number }], unknown];
    const deltas = Number(n);
    expect(deltas).toBeGreaterThanOrEqual(5);
    const parada = new AbortController();
    const relatos: number[] = [];
    const feitos = await compactarContagem(
      2,
      (p) => {
        relatos.push(p.consolidados);
        parada.abort();
      },
      parada.signal,
    );
    expect(feitos).toBe(2);
    expect(relatos).toEqual([2]);
    // the rest, folded by the next run, each delta once
    expect(await compactarContagem(2, (p) => relatos.push(p.consolidados))).toBe(deltas - 2);
    expect(relatos.at(-1)).toBe(deltas - 2);
    expect((await get('/conversa', { status: 'pending' })).body.total).toBe(await Conversa.count({ where: { status: 'pending' } }));
  });

  it('a count delta still uncommitted when the counts are folded is waited for, and folded once', async () => {
    const escritor = await novaConexao('sales');
    try {
      await escritor.beginTransaction();
      const agora = new Date();
      await escritor.query(
        `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, contato_nome, contato_telefone,
           contato_telefone_digitos, status, ultima_mensagem, criado_em, atualizado_em) VALUES (?, ?, ?, '', '', '', 'pending', '', ?, ?)`,
        [uuidv7(), sistema.id, idDoSuporte(), agora, agora],
      );
      await conversa({ status: 'pending' });
      let terminou = false;
      const compactacao = compactarContagem().then((n) => ((terminou = true), n));
      await new Promise((r) => setTimeout(r, 300));
      expect(terminou).toBe(false);
      await escritor.commit();
      expect(await compactacao).toBeGreaterThanOrEqual(2);
    } finally {
      await escritor.end();
    }
    expect((await get('/conversa', { status: 'pending' })).body.total).toBe(await Conversa.count({ where: { status: 'pending' } }));
  });

  it('answers 400 for a status out of the four and for a page that is not an integer', async () => {
    esperarProblema(await get('/conversa', { status: 'fechada' }), 400);
    esperarProblema(await get('/conversa', { pagina: 'um' }), 400);
    esperarProblema(await get('/conversa', { tamanho: 'muitos' }), 400);
    // written as an integer (DESIGN §4), though ignored
    for (const tamanho of ['1e3', '3.0', '0x10']) esperarProblema(await get('/conversa', { tamanho }), 400);
  });
});

describe('SPEC 4.6 rule 2: POST /conversa', () => {
  it('always answers 403, even to a master; 401 without a token; nothing is stored', async () => {
    const antes = await Conversa.count({ paranoid: false });
    esperarProblema(await s.api.post('/conversa', { token: admin, body: { contato_nome: 'x' } }), 403);
    esperarProblema(await s.api.post('/conversa', {}), 401);
    expect(await Conversa.count({ paranoid: false })).toBe(antes);
  });

  it('the body is never read: malformed JSON or one past the size limit still answers 403 (401 without a token)', async () => {
    const grande = JSON.stringify({ contato_nome: 'x'.repeat(2 * 1024 * 1024) });
    esperarProblema(await s.api.post('/conversa', { token: admin, raw: '{"contato_nome": ' }), 403);
    esperarProblema(await s.api.post('/conversa', { token: admin, raw: grande }), 403);
    esperarProblema(await s.api.post('/conversa', { raw: grande }), 401);
  });
});

describe('SPEC 4.6 rule 3: GET /conversa/autocomplete', () => {
  it('alphabetical by contact name; busca matches the name (any case) or the phone; total counts the matches', async () => {
    const tag = unico('Auto');
    const nomes = [`${tag} Carla`, `${tag} alberto`, `${tag} Bruna`];
    for (const nome of nomes) await conversa({ contato: novoContato({ nome }) });
    const telefone = '+55 21 99123-4567';
    await conversa({ contato: novoContato({ nome: 'Zeca Telefone', telefone }) });

    const res = await get('/conversa/autocomplete', { busca: tag.toLowerCase() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ itens: expect.any(Array), pagina: 1, tamanho: 10, total: 3 });
    expect(res.body.itens.map((i: any) => i.contato_nome)).toEqual([`${tag} alberto`, `${tag} Bruna`, `${tag} Carla`]);
    expect(Object.keys(res.body.itens[0]).sort()).toEqual(['contato_nome', 'contato_telefone', 'id', 'suporte_conversa_id']);

    const porTelefone = await get('/conversa/autocomplete', { busca: '99123-45' });
    expect(porTelefone.body.itens.map((i: any) => i.contato_telefone)).toEqual([telefone]);
    expect((await get('/conversa/autocomplete', { busca: '(21) 99123' })).body.itens.map((i: any) => i.contato_telefone)).toEqual([telefone]);
    // a text with letters is a name: its digits do not match every phone that has them
    const nomeEDigitos = await get('/conversa/autocomplete', { busca: 'Zeca 99123', tamanho: 10_000 });
    expect(nomeEDigitos.body).toMatchObject({ itens: [], total: 0 });

    const pagina2 = await get('/conversa/autocomplete', { busca: tag, tamanho: 2, pagina: 2 });
    expect(pagina2.body).toMatchObject({ pagina: 2, tamanho: 2, total: 3 });
    expect(pagina2.body.itens.map((i: any) => i.contato_nome)).toEqual([`${tag} Carla`]);
    const minimo = (await get('/conversa/autocomplete', { busca: tag, tamanho: 0, pagina: -3 })).body;
    expect(minimo).toEqual({ itens: [expect.objectContaining({ contato_nome: `${tag} alberto` })], pagina: 1, tamanho: 1, total: 3 });
  });

  it('`tamanho` defaults to 10 items', async () => {
    // more than a page of its own, whatever ran before
    for (let i = 0; i < 11; i++) await conversa();
    const res = (await get('/conversa/autocomplete')).body;
    expect(res.total).toBeGreaterThan(10);
    expect(res).toEqual({ itens: expect.any(Array), pagina: 1, tamanho: 10, total: res.total });
    expect(res.itens).toHaveLength(10);
  });

  it('without busca, every live conversation; `tamanho` has no maximum', async () => {
    const res = await get('/conversa/autocomplete', { tamanho: 10_000 });
    expect(res.body.total).toBe(await Conversa.count());
    expect(res.body.itens).toHaveLength(res.body.total);
  });

  it('a page far past the end, however large pagina times tamanho, is an empty page', async () => {
    const res = await get('/conversa/autocomplete', { pagina: 1_000_000, tamanho: '1000000000000000' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ itens: [], pagina: 1_000_000, tamanho: 1e15, total: await Conversa.count() });
  });
});

describe('SPEC 4.6 rule 4: GET /conversa/filtro', () => {
  it('ids and status compare exactly; results are most recent first', async () => {
    const cliente = await s.criar('cliente', { razao_social: `${unico('Padaria ')} Ltda` });
    const robo = await s.criar('robo', { nome: unico('Robô ') });
    // made middle, newest, oldest: an order by id (or creation) either way is not the order by last message
    const m = await conversa({ em: new Date('2026-03-02T00:00:00Z'), status: 'open' });
    const b = await conversa({ em: new Date('2026-03-03T00:00:00Z'), status: 'resolved' });
    const a = await conversa({ em: new Date('2026-03-01T00:00:00Z'), status: 'open' });
    // changed in the order a, m, b: an order by the last change is not taken for one by last message either
    for (const c of [a, m, b]) {
      const r = await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: cliente.id, robo_id: robo.id } });
      expect(r.status).toBe(200);
    }
    expect((await get('/conversa/filtro', { cliente_id: cliente.id })).body.map((c: any) => c.id)).toEqual([b.id, m.id, a.id]);
    expect((await get('/conversa/filtro', { robo_id: robo.id, status: 'open' })).body.map((c: any) => c.id)).toEqual([m.id, a.id]);
    expect((await get('/conversa/filtro', { suporte_conversa_id: b.suporteConversaId })).body.map((c: any) => c.id)).toEqual([b.id]);
    // exact, not a part: a prefix of an id finds nothing
    expect((await get('/conversa/filtro', { cliente_id: cliente.id.slice(0, 8) })).body).toEqual([]);
    expect((await get('/conversa/filtro', { robo_id: robo.id.slice(0, 8) })).body).toEqual([]);
    const prefixo = String(b.suporteConversaId).slice(0, -1);
    const porPrefixo = (await get('/conversa/filtro', { suporte_conversa_id: prefixo })).body.map((c: any) => c.id);
    expect(porPrefixo).not.toContain(b.id);
  });

  it('the filter runs under a time limit the database enforces; past it, 503 asking for more filters, never a read of minutes', async () => {
    const lido = jest.spyOn(database, 'lerDemorado');
    try {
      expect((await get('/conversa/filtro', { texto: 'qualquer coisa' })).status).toBe(200);
      expect(lido.mock.calls.at(-1)![3]).toBe(PRAZO_DO_FILTRO_S);
      // the database's own refusal once the limit passed
      const ler = lido.getMockImplementation() ?? jest.requireActual('../../lib/database').lerDemorado;
      lido.mockImplementation(async (banco, sql, parametros, prazoS) => {
        if (prazoS !== undefined) throw Object.assign(new Error('Query execution was interrupted (max_statement_time exceeded)'), { errno: 1969 });
        return ler(banco, sql, parametros, prazoS);
      });
      const problema = esperarProblema(await get('/conversa/filtro', { texto: 'qualquer coisa' }), 503);
      expect(problema.detail).toMatch(/combine mais filtros/);
    } finally {
      lido.mockRestore();
    }
  });

  it('a contact is found by its own name whatever its letters: the database puts both in lower case (İ, ẞ)', async () => {
    const tag = unico('Letras');
    const turco = await conversa({ contato: novoContato({ nome: `İlker ${tag}` }) });
    const alemao = await conversa({ contato: novoContato({ nome: `GROẞ ${tag}` }) });
    for (const [nome, c] of [[`İlker ${tag}`, turco], [`GROẞ ${tag}`, alemao]] as const) {
      expect((await get('/conversa/filtro', { contato: nome })).body.map((x: any) => x.id)).toEqual([c.id]);
      expect((await get('/conversa/autocomplete', { busca: nome })).body.itens.map((x: any) => x.id)).toEqual([c.id]);
    }
  });

  it('characters outside the basic plane (emoji) are stored and found like any other: the name, the message, both searches', async () => {
    const tag = unico('Emoji');
    const c = await conversa({ contato: novoContato({ nome: `Ana 😀 ${tag}` }), conteudo: `oi 👍🏽 ${tag}` });
    expect((await s.api.get(`/conversa/${c.id}`, { token: admin })).body.contato_nome).toBe(`Ana 😀 ${tag}`);
    expect((await s.mensagens(c.id)).map((m: any) => m.conteudo)).toEqual([`oi 👍🏽 ${tag}`]);
    expect((await get('/conversa/filtro', { contato: `😀 ${tag}` })).body.map((x: any) => x.id)).toEqual([c.id]);
    expect((await get('/conversa/filtro', { texto: `👍🏽 ${tag}` })).body.map((x: any) => x.id)).toEqual([c.id]);
    expect((await get('/conversa/autocomplete', { busca: `Ana 😀 ${tag}` })).body.itens.map((x: any) => x.id)).toEqual([c.id]);
  });

  it('a name sent decomposed (a letter and its combining accent) is the same name as composed, both ways', async () => {
    const tag = unico('Nfd');
    const decomposto = await conversa({ contato: novoContato({ nome: `Joa\u0303o ${tag}` }) });
    const composto = await conversa({ contato: novoContato({ nome: `Simo\u0303es ${tag}`.normalize('NFC') }) });
    expect((await s.api.get(`/conversa/${decomposto.id}`, { token: admin })).body.contato_nome).toBe(`João ${tag}`.normalize('NFC'));
    expect((await get('/conversa/filtro', { contato: `joão ${tag}`.normalize('NFC') })).body.map((x: any) => x.id)).toEqual([decomposto.id]);
    expect((await get('/conversa/autocomplete', { busca: `Simo\u0303es ${tag}` })).body.itens.map((x: any) => x.id)).toEqual([composto.id]);
  });

  it('accents are ignored as well as case, both ways: `joao` finds João, `JOÃO` finds Joao', async () => {
    const tag = unico('Acento');
    const acentuado = await conversa({ contato: novoContato({ nome: `João Conceição ${tag}` }) });
    const simples = await conversa({ contato: novoContato({ nome: `Joao Simoes ${tag}` }) });
    const ids = async (contato: string) => (await get('/conversa/filtro', { contato })).body.map((x: any) => x.id).sort();
    expect(await ids(`joao ${tag}`)).toEqual([]); // the tag is after the surname
    expect(await ids(`conceicao ${tag}`)).toEqual([acentuado.id]);
    expect(await ids(`CONCEIÇÃO ${tag}`)).toEqual([acentuado.id]);
    expect(await ids(`simões ${tag}`)).toEqual([simples.id]);
    const doAutocomplete = await get('/conversa/autocomplete', { busca: 'JOÃO', tamanho: 10_000 });
    expect(doAutocomplete.body.itens.map((x: any) => x.id)).toEqual(expect.arrayContaining([acentuado.id, simples.id]));
    // only accents go: another letter is still another letter
    expect(await ids(`conceicoo ${tag}`)).toEqual([]);
  });

  it('migration 0015 builds the stored search text again without accents, so names stored before are found', async () => {
    const tag = unico('SemAcento');
    const antiga = await conversa({ contato: novoContato({ nome: `Zé Açaí ${tag}` }) });
    const qi = banco('sales').getQueryInterface();
    // the column as migration 0002 built it
    await qi.sequelize.query(
      `ALTER TABLE conversa MODIFY contato_busca VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
        GENERATED ALWAYS AS (CONCAT(LOWER(contato_nome), '\\n', contato_telefone_digitos)) STORED`,
    );
    expect((await get('/conversa/filtro', { contato: `ze acai ${tag}` })).body).toEqual([]);
    await MIGRACOES_SALES.find((m) => m.name === '0015-sales-contato-sem-acentos')!.up(qi);
    expect((await get('/conversa/filtro', { contato: `ze acai ${tag}` })).body.map((x: any) => x.id)).toEqual([antiga.id]);
  });

  it('migration 0009 composes the names stored decomposed before, so the search finds them', async () => {
    const tag = unico('Antigo');
    const antigo = await conversa({ contato: novoContato({ nome: `Conceic\u0327a\u0303o ${tag}` }) });
    // as stored before names were composed at the webhook
    await Conversa.update({ contato_nome: `Conceic\u0327a\u0303o ${tag}` }, { where: { id: antigo.id } });
    expect((await get('/conversa/filtro', { contato: `conceição ${tag}` })).body).toEqual([]);
    await MIGRACOES_SALES.find((m) => m.name === '0009-sales-nomes-compostos')!.up(banco('sales').getQueryInterface());
    expect((await Conversa.findByPk(antigo.id))!.contato_nome).toBe(`Conceição ${tag}`.normalize('NFC'));
    expect((await get('/conversa/filtro', { contato: `conceição ${tag}` })).body.map((x: any) => x.id)).toEqual([antigo.id]);
  });

  it('`contato` finds the contact name, the customer\'s company name or the phone digits, in any case', async () => {
    const tag = unico('Contato');
    const porNome = await conversa({ contato: novoContato({ nome: `Maria ${tag}` }) });
    const porTelefone = await conversa({ contato: novoContato({ telefone: '+55 (31) 97777-1234' }) });
    const porCliente = await conversa();
    const cliente = await s.criar('cliente', { razao_social: `Oficina ${tag} ME` });
    await s.api.patch(`/conversa/${porCliente.id}`, { token: admin, body: { cliente_id: cliente.id } });

    const ids = async (contato: string) => (await get('/conversa/filtro', { contato })).body.map((c: any) => c.id).sort();
    expect(await ids(tag.toUpperCase())).toEqual([porNome.id, porCliente.id].sort());
    expect(await ids('97777-12')).toEqual([porTelefone.id]);
    expect(await ids('(31) 9777')).toEqual([porTelefone.id]);
    expect(await ids('3197777')).toEqual([porTelefone.id]);
    // a text's wildcard characters are plain characters
    expect(await ids(`${tag}%`)).toEqual([]);
    expect(await ids(`maria_${tag}`)).toEqual([]);

    // the digits of a text with letters match the phone, never the digits of a name
    const digitosNoNome = await conversa({ contato: novoContato({ nome: `Loja 60613 ${tag}`, telefone: '+55 11 3333-4444' }) });
    const digitosNoTelefone = await conversa({ contato: novoContato({ nome: `Bazar ${tag}`, telefone: '+55 11 96061-3000' }) });
    const porDigitos = await ids('Ponto 60613');
    expect(porDigitos).toContain(digitosNoTelefone.id);
    expect(porDigitos).not.toContain(digitosNoNome.id);
    // digits alone match the name too, as any text does
    expect(await ids('60613')).toEqual(expect.arrayContaining([digitosNoNome.id, digitosNoTelefone.id]));
    // a name sent with a line break or a tab is stored with spaces: found whole, and its digits are still no phone
    const quebrado = await conversa({ contato: novoContato({ nome: `Ana\n${tag}\t60613`, telefone: '+55 11 3333-4444' }) });
    expect((await get(`/conversa/${quebrado.id}`)).body.contato_nome).toBe(`Ana ${tag} 60613`);
    expect(await ids(`ana ${tag.toLowerCase()}`)).toEqual([quebrado.id]);
    expect(await ids('Ponto 60613')).not.toContain(quebrado.id);
  });

  it('`texto` finds a substring of any message of the conversation, in any case', async () => {
    const tag = unico('Texto');
    const c = await conversa({ conteudo: 'primeira mensagem' });
    await s.registrar(sistema, eventoDeMensagem({ conversa: c.suporteConversaId, conteudo: `quero o plano ${tag} anual` }));
    await s.registrar(sistema, eventoDeMensagem({ conversa: c.suporteConversaId, conteudo: 'última' }));
    await conversa({ conteudo: `outra conversa sem a marca` });
    expect((await get('/conversa/filtro', { texto: `PLANO ${tag.toUpperCase()}` })).body.map((x: any) => x.id)).toEqual([c.id]);
    expect((await get('/conversa/filtro', { texto: `${tag}%` })).body).toEqual([]);
  });

  it('without filters, the 500 most recent; empty values are ignored', async () => {
    for (let i = 0; i < 10; i++) await conversa();
    const total = await Conversa.count();
    const res = await get('/conversa/filtro', { status: '', contato: '' });
    expect(res.body).toHaveLength(Math.min(500, total));
    expect(res.body.map((c: any) => c.ultima_mensagem_em)).toEqual(recentesPrimeiro(res.body.map((c: any) => c.ultima_mensagem_em)));
  });

  it('answers 400 for a chat conversation id that is not a number', async () => {
    for (const suporte_conversa_id of ['dez', '10.0', '1e1']) esperarProblema(await get('/conversa/filtro', { suporte_conversa_id }), 400);
  });
});

describe('SPEC 4.6 rule 4: at most 500 conversations', () => {
  it('past 500 matches the filter answers the 500 most recent', async () => {
    const tag = unico('Muitas');
    const base = Date.parse('2025-06-01T00:00:00Z');
    const contato = (i: number) => novoContato({ nome: `${tag} ${String(i).padStart(3, '0')}` });
    await Promise.all(
      Array.from({ length: 510 }, (_, i) => s.registrar(sistema, eventoDeMensagem({ conversa: idDoSuporte(), contato: contato(i), criadaEm: new Date(base + i * 1000) }))),
    );
    const res = await get('/conversa/filtro', { contato: tag });
    expect(res.body).toHaveLength(500);
    expect(res.body[0].contato_nome).toBe(`${tag} 509`);
    expect(res.body[499].contato_nome).toBe(`${tag} 010`);
    // without filters too, now that there are more than 500 conversations
    expect(await Conversa.count()).toBeGreaterThan(500);
    const todas = await get('/conversa/filtro', {});
    expect(todas.body).toHaveLength(500);
    expect(todas.body.map((c: any) => c.ultima_mensagem_em)).toEqual(recentesPrimeiro(todas.body.map((c: any) => c.ultima_mensagem_em)));
    // and the autocomplete's tamanho has no maximum: past 500, every one of them on one page
    const auto = await get('/conversa/autocomplete', { tamanho: 10_000 });
    expect(auto.body.total).toBe(await Conversa.count());
    expect(auto.body.itens).toHaveLength(auto.body.total);
  });
});

describe('SPEC 4.6 rule 5: GET /conversa/{id}', () => {
  it('every field with names, RFC 3339 dates; a deleted conversation answers 404, an unknown one too', async () => {
    const cliente = await s.criar('cliente', { razao_social: 'Cliente Exemplo SA' });
    const robo = await s.criar('robo', { nome: 'Robô Exemplo' });
    const c = await conversa({ em: new Date('2026-05-05T05:05:05.123Z') });
    await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: cliente.id, robo_id: robo.id } });
    const res = await get(`/conversa/${c.id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(CAMPOS_DA_CONVERSA);
    // a message's time is kept in whole seconds, as the platform's copies in conversation events have it
    expect(res.body).toMatchObject({ cliente_razao_social: 'Cliente Exemplo SA', robo_nome: 'Robô Exemplo', ultima_mensagem_em: '2026-05-05T05:05:05.000Z' });
    for (const campo of ['criado_em', 'atualizado_em', 'ultima_mensagem_em', 'ultima_mensagem_do_contato_em']) expect(res.body[campo]).toMatch(RFC3339);

    await s.api.del(`/conversa/${c.id}`, { token: admin });
    esperarProblema(await get(`/conversa/${c.id}`), 404);
    esperarProblema(await get('/conversa/019a0000-0000-7000-8000-000000000000'), 404);
    esperarProblema(await get('/conversa/um id com espaço'), 400);
  });
});

describe('SPEC 4.6 rule 6: PATCH /conversa/{id}', () => {
  it('links a customer and a robot, corrects the status; only what is sent changes; null unlinks', async () => {
    const cliente = await s.criar('cliente', { razao_social: 'Cliente Patch' });
    const robo = await s.criar('robo', { nome: 'Robô Patch' });
    const c = await conversa({ status: 'pending' });
    const antes = (await get(`/conversa/${c.id}`)).body;

    const r1 = await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: cliente.id } });
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ cliente_id: cliente.id, cliente_razao_social: 'Cliente Patch', robo_id: null, status: 'pending' });

    const r2 = await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { robo_id: robo.id, status: 'resolved' } });
    expect(r2.body).toMatchObject({ cliente_id: cliente.id, robo_id: robo.id, robo_nome: 'Robô Patch', status: 'resolved' });
    const { atualizado_em: _a, ...semData } = r2.body;
    const { atualizado_em: _b, ...antesSemData } = antes;
    expect(semData).toEqual({ ...antesSemData, cliente_id: cliente.id, cliente_razao_social: 'Cliente Patch', robo_id: robo.id, robo_nome: 'Robô Patch', status: 'resolved' });

    const r3 = await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: null } });
    const { atualizado_em: _c, ...r3SemData } = r3.body;
    expect(r3SemData).toEqual({ ...semData, cliente_id: null, cliente_razao_social: null });
  });

  it('nothing changes in the chat platform: a conversation of a system with its API configured calls nothing there (SPEC §3)', async () => {
    const comApi = await s.criarSistema('suporte', { url: CHAT, conta_id: 1, token_api: 'token-da-api' });
    const r = await s.registrar(comApi, eventoDeMensagem({ conversa: idDoSuporte(), status: 'pending' }));
    const chamadas: string[] = [];
    // fetch's requests carry their host themselves, node:http's in their options
    const anotar = (req: { method?: string; path?: string; hostname?: string; options?: { hostname?: string } }) =>
      chamadas.push(`${req.method} ${req.hostname ?? req.options?.hostname} ${req.path}`);
    nock.emitter.on('no match', anotar);
    try {
      for (const status of ['open', 'resolved', 'snoozed', 'pending']) {
        const res = await s.api.patch(`/conversa/${r.conversa_id}`, { token: admin, body: { status } });
        expect(res.body.status).toBe(status);
      }
      await dormir(300); // a call made in the background would be under way by now
    } finally {
      nock.emitter.removeListener('no match', anotar);
    }
    expect(chamadas.filter((c) => c.includes('chat.exemplo.test'))).toEqual([]);
  });

  it('a customer or robot that does not exist answers 422; a bad status or another field 400; nothing changes', async () => {
    const c = await conversa({ status: 'open' });
    const inexistente = '019a0000-0000-7000-8000-000000000001';
    const p = esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: inexistente, status: 'resolved' } }), 422);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'cliente_id' })]);
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { robo_id: inexistente } }), 422);
    const apagado = await s.criar('cliente', { razao_social: 'Apagado' });
    await s.api.del(`/cliente/${apagado.id}`, { token: admin });
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: apagado.id } }), 422);
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { status: 'fechada' } }), 400);
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { contato_nome: 'outro' } }), 400);
    esperarProblema(await s.api.patch('/conversa/019a0000-0000-7000-8000-000000000000', { token: admin, body: { status: 'open' } }), 404);
    expect((await get(`/conversa/${c.id}`)).body).toMatchObject({ status: 'open', cliente_id: null, robo_id: null, contato_nome: expect.not.stringMatching('outro') });
  });

  async function apagar(cliente: { id: string }, robo: { id: string }) {
    for (const [rota, vinculo] of [['cliente', cliente], ['robo', robo]] as const) {
      expect((await s.api.del(`/${rota}/${vinculo.id}`, { token: admin })).status).toBe(204);
    }
  }

  /** A conversation linked to a customer and a robot both deleted since (its history keeps their names). */
  async function ligadaAApagados(nome: string) {
    const cliente = await s.criar('cliente', { razao_social: `Cliente ${nome}` });
    const robo = await s.criar('robo', { nome: `Robô ${nome}` });
    const c = await conversa({ status: 'pending' });
    expect((await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: cliente.id, robo_id: robo.id } })).status).toBe(200);
    await apagar(cliente, robo);
    return { c, cliente, robo, antes: (await get(`/conversa/${c.id}`)).body };
  }

  it('the customer and robot the conversation holds, sent back though deleted since, are accepted and change nothing: only the status changes', async () => {
    const { c, cliente, robo, antes } = await ligadaAApagados('de antes');
    // a form that sends every field back to change only the status
    const r = await s.api.patch(`/conversa/${c.id}`, { token: admin, body: { cliente_id: cliente.id, robo_id: robo.id, status: 'resolved' } });
    expect(r.status).toBe(200);
    const { atualizado_em: _a, ...depois } = r.body;
    const { atualizado_em: _b, ...antesSemData } = antes;
    expect(depois).toEqual({ ...antesSemData, status: 'resolved' });
    expect(antes).toMatchObject({ cliente_razao_social: 'Cliente de antes', robo_nome: 'Robô de antes' });
  });

  it('another deleted customer or robot still answers 422 naming it, even beside the deleted one the conversation holds; nothing changes', async () => {
    const { c, cliente, robo, antes } = await ligadaAApagados('que fica');
    const outroCliente = await s.criar('cliente', { razao_social: 'Outro apagado' });
    const outroRobo = await s.criar('robo', { nome: 'Outro robô apagado' });
    await apagar(outroCliente, outroRobo);
    for (const [body, campo] of [
      [{ cliente_id: cliente.id, robo_id: outroRobo.id, status: 'resolved' }, 'robo_id'],
      [{ cliente_id: outroCliente.id, robo_id: robo.id, status: 'resolved' }, 'cliente_id'],
    ] as const) {
      expect(esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: admin, body }), 422).errors).toEqual([expect.objectContaining({ campo })]);
    }
    expect((await get(`/conversa/${c.id}`)).body).toEqual(antes);
  });

  it('a deletion of the conversation under way when the change comes: 404, and the deleted record is left as it was', async () => {
    const c = await conversa({ status: 'pending' });
    const conexao = await novaConexao('sales');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('UPDATE conversa SET deletado_em = NOW(3) WHERE id = ?', [c.id]);
      const pedido = s.api.patch(`/conversa/${c.id}`, { token: admin, body: { status: 'resolved' } });
      await esperarOutraConexao(conexao, 'the change waiting on the conversation', ['%FROM `conversa`%FOR UPDATE%', 'UPDATE `conversa`%']);
      await conexao.query('COMMIT');
      esperarProblema(await pedido, 404);
      const [[linha]] = (await conexao.query('SELECT status FROM conversa WHERE id = ?', [c.id])) as any;
      expect(linha.status).toBe('pending');
    } finally {
      await conexao.end();
    }
  });

  it('a customer or robot deleted while the change is being made: 422, and the conversation is not linked to it', async () => {
    const c = await conversa();
    const conexao = await novaConexao('sales');
    try {
      for (const [rota, campo, dados] of [
        ['cliente', 'cliente_id', { razao_social: 'Sumindo' }],
        ['robo', 'robo_id', { nome: 'Robô sumindo' }],
      ] as const) {
        const vinculo = await s.criar(rota, dados);
        await conexao.query('START TRANSACTION');
        await conexao.query(`UPDATE ${rota} SET deletado_em = NOW(3) WHERE id = ?`, [vinculo.id]);
        const pedido = s.api.patch(`/conversa/${c.id}`, { token: admin, body: { [campo]: vinculo.id } });
        await esperarOutraConexao(conexao, `the change waiting on the ${rota}`, [`%FROM \`${rota}\`%LOCK IN SHARE MODE%`]);
        await conexao.query('COMMIT');
        expect(esperarProblema(await pedido, 422).errors).toEqual([expect.objectContaining({ campo })]);
      }
      expect((await get(`/conversa/${c.id}`)).body).toMatchObject({ cliente_id: null, robo_id: null });
    } finally {
      await conexao.end();
    }
  });
});

describe('SPEC §3: DELETE /conversa/{id}', () => {
  it('removes the conversation and its messages and attachments in one go; 404 after', async () => {
    const c = await conversa();
    await s.registrar(
      sistema,
      eventoDeMensagem({ conversa: c.suporteConversaId, anexos: [{ id: 1, data_url: 'https://chat.exemplo.test/arquivo.pdf', file_type: 'file' }] }),
    );
    expect(await ConversaMensagem.count({ where: { conversa_id: c.id } })).toBe(2);
    const del = await s.api.del(`/conversa/${c.id}`, { token: admin });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect(await ConversaMensagem.count({ where: { conversa_id: c.id } })).toBe(0);
    expect(await AnexoDaMensagem.count({ where: { conversa_id: c.id } })).toBe(0);
    expect(await Conversa.count({ where: { id: c.id }, paranoid: false })).toBe(1);
    esperarProblema(await s.api.del(`/conversa/${c.id}`, { token: admin }), 404);
    esperarProblema(await get(`/conversa/${c.id}/mensagens`), 404);
  });
});

describe('SPEC 4.6 rule 7: GET /conversa/{id}/mensagens', () => {
  it('in sending order, each with its attachments (not yet copied: no file, no url)', async () => {
    const c = await conversa({ em: new Date('2026-07-01T10:00:00Z'), conteudo: 'um' });
    const t = (m: number) => new Date(Date.parse('2026-07-01T10:00:00Z') + m * 60_000);
    await s.registrar(sistema, eventoDeMensagem({ conversa: c.suporteConversaId, conteudo: 'três', criadaEm: t(2) }));
    await s.registrar(
      sistema,
      eventoDeMensagem({
        conversa: c.suporteConversaId,
        conteudo: 'dois',
        criadaEm: t(1),
        anexos: [{ id: 77, data_url: 'https://chat.exemplo.test/rails/active_storage/blobs/x/foto%20nova.jpg', file_type: 'image' }],
      }),
    );
    const mensagens = await s.mensagens(c.id);
    expect(mensagens.map((m) => m.conteudo)).toEqual(['um', 'dois', 'três']);
    expect(mensagens[1]).toMatchObject({ quantidade_anexos: 1 });
    expect(mensagens[1].anexos).toEqual([
      {
        endereco: 'https://chat.exemplo.test/rails/active_storage/blobs/x/foto%20nova.jpg',
        nome: 'foto nova.jpg',
        tipo: 'image',
        arquivo_id: null,
        tipo_mime: null,
        tamanho: null,
        url: null,
        tentativas: expect.any(Number),
      },
    ]);
  });

  it('a deletion committing while the messages are read: they are answered as they were, never as an empty list', async () => {
    const c = await conversa({ conteudo: 'primeira' });
    await s.registrar(sistema, eventoDeMensagem({ conversa: c.suporteConversaId, conteudo: 'segunda' }));
    const antes = await s.mensagens(c.id);
    expect(antes.map((m) => m.conteudo)).toEqual(['primeira', 'segunda']);

    const lerLinhas = database.lerLinhas;
    let apagada = false;
    // the deletion commits right after the listing's statement (before: between its two)
    const espiao = jest.spyOn(database, 'lerLinhas').mockImplementation(async (...args: Parameters<typeof lerLinhas>) => {
      const linhas = await lerLinhas(...args);
      if (!apagada && args[1].includes('conversa')) {
        apagada = true;
        await deletarConversa(c.id);
      }
      return linhas;
    });
    let res;
    try {
      res = await get(`/conversa/${c.id}/mensagens`);
    } finally {
      espiao.mockRestore();
    }
    expect(apagada).toBe(true);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(antes);
    esperarProblema(await get(`/conversa/${c.id}/mensagens`), 404);
  });
});

describe('SPEC 4.6 access: area clientes', () => {
  it('any permission of the area reads; editar updates; deletar deletes; criar still gets 403 on POST', async () => {
    const c = await conversa();
    const leitor = await s.pessoa({ permissoes: { clientes: ['criar'] } });
    expect((await get('/conversa', {}, leitor.token)).status).toBe(200);
    expect((await get(`/conversa/${c.id}`, {}, leitor.token)).status).toBe(200);
    expect((await get(`/conversa/${c.id}/mensagens`, {}, leitor.token)).status).toBe(200);
    expect((await get('/conversa/filtro', {}, leitor.token)).status).toBe(200);
    expect((await get('/conversa/autocomplete', {}, leitor.token)).status).toBe(200);
    const antes = (await Conversa.findByPk(c.id))!.get({ plain: true });
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: leitor.token, body: { status: 'open' } }), 403);
    esperarProblema(await s.api.del(`/conversa/${c.id}`, { token: leitor.token }), 403);
    esperarProblema(await s.api.post('/conversa', { token: leitor.token }), 403);
    // refused, nothing changed
    expect((await Conversa.findByPk(c.id))!.get({ plain: true })).toEqual(antes);

    // each action only its own: editar does not delete, deletar does not edit; both read
    const editor = await s.pessoa({ permissoes: { clientes: ['editar'] } });
    const apagador = await s.pessoa({ permissoes: { clientes: ['deletar'] } });
    for (const p of [editor, apagador]) expect((await get(`/conversa/${c.id}`, {}, p.token)).status).toBe(200);
    esperarProblema(await s.api.del(`/conversa/${c.id}`, { token: editor.token }), 403);
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: apagador.token, body: { status: 'snoozed' } }), 403);
    expect((await Conversa.findByPk(c.id))!.get({ plain: true })).toEqual(antes);
    expect((await s.api.patch(`/conversa/${c.id}`, { token: editor.token, body: { status: 'open' } })).status).toBe(200);
    expect((await s.api.del(`/conversa/${c.id}`, { token: apagador.token })).status).toBe(204);
  });

  it('the seeded profile Acesso inicial, given by the master listing, reads clientes and colaboradores and only reads (DESIGN §3)', async () => {
    const c = await conversa();
    const { token } = await s.pessoa();
    const perfis = await s.api.get('/perfil_acesso/filtro', { token: admin, query: { nome: 'Acesso inicial' } });
    expect(perfis.body).toEqual([
      expect.objectContaining({ nome: 'Acesso inicial', permissoes: { clientes: ['ler'], colaboradores: ['ler'] }, sistema: true }),
    ]);
    expect((await get('/conversa', {}, token)).status).toBe(200);
    expect((await get(`/conversa/${c.id}/mensagens`, {}, token)).status).toBe(200);
    const antes = (await Conversa.findByPk(c.id))!.get({ plain: true });
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token, body: { status: 'open' } }), 403);
    esperarProblema(await s.api.del(`/conversa/${c.id}`, { token }), 403);
    expect((await Conversa.findByPk(c.id))!.get({ plain: true })).toEqual(antes);
  });

  it('without a permission in the area answers 403; no token or a bad one 401; an application token 403', async () => {
    const semArea = await s.pessoa({ permissoes: { colaboradores: ['ler'] } });
    esperarProblema(await get('/conversa', {}, semArea.token), 403);
    const semPerfil = await s.pessoa({ permissoes: null });
    esperarProblema(await get('/conversa', {}, semPerfil.token), 403);
    esperarProblema(await s.api.get('/conversa'), 401);
    esperarProblema(await get('/conversa', {}, `${admin.slice(0, -4)}abcd`), 401);
    const app = await s.identity.criarAplicativo();
    esperarProblema(await get('/conversa', {}, app.token), 403);
  });

  it('the order of checks: a reader without editar gets 403 before a bad body is looked at', async () => {
    const leitor = await s.pessoa({ permissoes: { clientes: ['ler'] } });
    const c = await conversa();
    const antes = (await Conversa.findByPk(c.id))!.get({ plain: true });
    esperarProblema(await s.api.patch(`/conversa/${c.id}`, { token: leitor.token, body: { status: 'fechada' } }), 403);
    expect((await Conversa.findByPk(c.id))!.get({ plain: true })).toEqual(antes);
  });
});
