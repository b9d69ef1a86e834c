import { randomUUID } from 'node:crypto';
import { Colaborador } from '../../models/intranet';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DO_COLABORADOR, Intranet, intranetDe, porNomeEId, unico } from './apoio';

/**
 * Volume for paging: 120 collaborators inserted straight into the intranet's table after the suite
 * started. A master listing would mark them deleted (their auth_id is not in identity), so every
 * read here is made by a non-master holding `Acesso inicial`, whose listing does not sync.
 */
let suite: SuiteDeTeste;
let it: Intranet;
let token: string;
const tag = unico('Lista');
const dominio = `${unico('correio').toLowerCase()}.test`;

type Linha = {
  id: string;
  auth_id: string;
  nome: string;
  email: string;
  setor: string;
  cargo: string;
  ativo: boolean;
};
const linhas: Linha[] = Array.from({ length: 120 }, (_, i) => ({
  id: randomUUID(), // random ids: the (nome, id) order is not the insertion order
  auth_id: `fora-do-identity-${tag}-${i}`,
  nome: `${tag} ${String(Math.floor(i / 2)).padStart(3, '0')}`, // pairs share a name: id breaks the tie
  email: `pessoa${i}@${dominio}`,
  setor: i % 2 === 0 ? `Financeiro ${tag}` : `Comercial ${tag}`,
  cargo: i < 50 ? `Gerente ${tag}` : `Analista ${tag}`,
  ativo: i % 5 !== 0,
}));
const ordenadas = [...linhas].sort(porNomeEId);
const ids = (xs: { id: string }[]) => xs.map((x) => x.id);

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
  it = intranetDe(suite);
  ({ token } = await it.pessoa());
  await Colaborador.bulkCreate([...linhas].reverse());
});
afterAll(() => suite.encerrar());

const listar = (query: Record<string, string | number> = {}) => it.api.get('/colaborador', { token, query });

/** Follows proximo_cursor from the first page to the last, checking the shape of every page. */
async function percorrer(query: Record<string, string> = {}) {
  const itens: any[] = [];
  let cursor: string | undefined;
  for (let pagina = 0; pagina < 100; pagina++) {
    const res = await listar({ ...query, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['itens', 'proximo_cursor', 'tamanho']);
    expect(res.body.tamanho).toBe(50);
    itens.push(...res.body.itens);
    if (res.body.proximo_cursor === null) return itens;
    expect(res.body.itens).toHaveLength(50);
    expect(res.body.proximo_cursor).toBe(res.body.itens[49].id);
    cursor = res.body.proximo_cursor;
  }
  throw new Error('the cursor never reached the last page');
}

describe('GET /colaborador: cursor pages of 50 (SPEC 4.5 rule 1, SPEC §8, DESIGN §10)', () => {
  test('pages hold exactly 50 items in (nome, id) order; proximo_cursor is the id of the last item and null on the last page; no total', async () => {
    const p1 = await listar({ nome: tag });
    expect(p1.status).toBe(200);
    expect(p1.body).toEqual({ itens: expect.any(Array), proximo_cursor: ordenadas[49].id, tamanho: 50 });
    expect(ids(p1.body.itens)).toEqual(ids(ordenadas.slice(0, 50)));
    expect(Object.keys(p1.body.itens[0]).sort()).toEqual(CAMPOS_DO_COLABORADOR);

    const p2 = await listar({ nome: tag, cursor: p1.body.proximo_cursor });
    expect(ids(p2.body.itens)).toEqual(ids(ordenadas.slice(50, 100)));
    expect(p2.body.proximo_cursor).toBe(ordenadas[99].id);

    const p3 = await listar({ nome: tag, cursor: p2.body.proximo_cursor });
    expect(p3.body).toEqual({ itens: expect.any(Array), proximo_cursor: null, tamanho: 50 });
    expect(ids(p3.body.itens)).toEqual(ids(ordenadas.slice(100)));
  });

  test('a `tamanho` in the query is ignored: the page is always 50', async () => {
    for (const tamanho of [5, 500]) {
      const res = await listar({ nome: tag, tamanho });
      expect(res.body.tamanho).toBe(50);
      expect(res.body.itens).toHaveLength(50);
    }
  });

  test('a match of exactly 50 is one page whose proximo_cursor is null (no empty page after it)', async () => {
    const res = await listar({ cargo: `Gerente ${tag}` });
    expect(res.body.itens).toHaveLength(50);
    expect(res.body.proximo_cursor).toBeNull();
  });

  test('following the cursor from the first page walks every collaborator once, in order, as many as the total (SPEC 4.5 rules 1 and 4)', async () => {
    const todos = await percorrer();
    expect(new Set(ids(todos)).size).toBe(todos.length);
    const { body } = await it.api.get('/colaborador/total', { token });
    expect(todos).toHaveLength(body.total);
    expect(ids(todos.filter((c) => c.nome.startsWith(tag)))).toEqual(ids(ordenadas));
  });

  test('a cursor whose collaborator was deleted since its page was read still continues after it', async () => {
    const outra = unico('Cursor');
    const tres = ['A', 'B', 'C'].map((letra) => ({
      id: randomUUID(),
      auth_id: `${outra}-${letra}`,
      nome: `${outra} ${letra}`,
      email: `${letra.toLowerCase()}@${outra.toLowerCase()}.test`,
      setor: outra,
      cargo: outra,
      ativo: true,
    }));
    await Colaborador.bulkCreate(tres);
    await Colaborador.destroy({ where: { id: tres[0].id } });
    const res = await listar({ nome: outra, cursor: tres[0].id });
    expect(ids(res.body.itens)).toEqual(ids(tres.slice(1)));
    expect(res.body.proximo_cursor).toBeNull();
  });

  test('a cursor with a nonexistent id answers 200 with an empty page (SPEC §7)', async () => {
    const res = await listar({ cursor: randomUUID() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ itens: [], proximo_cursor: null, tamanho: 50 });
  });

  test.each([
    ['nome, in another case and partial', { nome: `${tag.toUpperCase()} 00` }, (l: Linha) => l.nome.startsWith(`${tag} 00`)],
    ['setor, in another case', { setor: `financeiro ${tag.toLowerCase()}` }, (l: Linha) => l.setor.startsWith('Financeiro')],
    ['cargo, partial', { cargo: `ENTE ${tag}` }, (l: Linha) => l.cargo.startsWith('Gerente')],
    ['ativo=false', { nome: tag, ativo: 'false' }, (l: Linha) => !l.ativo],
    ['ativo=true', { nome: tag, ativo: 'true' }, (l: Linha) => l.ativo],
    ['several filters at once', { setor: `Financeiro ${tag}`, ativo: 'false' }, (l: Linha) => l.setor.startsWith('F') && !l.ativo],
  ])('filter by %s: case-insensitive substrings and ativo; the total counts the same (SPEC 4.5 rules 1 and 4)', async (_caso, query, cabe) => {
    const esperadas = ordenadas.filter(cabe);
    expect(esperadas.length).toBeGreaterThan(0);
    expect(ids(await percorrer(query))).toEqual(ids(esperadas));
    const total = await it.api.get('/colaborador/total', { token, query });
    expect(total.status).toBe(200);
    expect(total.body).toEqual({ total: esperadas.length });
  });

  test('% and _ typed in a filter are literal characters, not wildcards', async () => {
    expect((await listar({ nome: `${tag} 0_0` })).body.itens).toEqual([]);
    expect((await listar({ nome: '%' })).body.itens).toEqual([]);
    expect((await it.api.get('/colaborador/total', { token, query: { nome: `${tag}%` } })).body).toEqual({ total: 0 });
  });

  test('a filter with no match answers an empty last page and a total of 0', async () => {
    expect((await listar({ nome: unico('Ninguem') })).body).toEqual({ itens: [], proximo_cursor: null, tamanho: 50 });
    expect((await it.api.get('/colaborador/total', { token, query: { nome: unico('Ninguem') } })).body).toEqual({ total: 0 });
  });

  test('a cursor naming no collaborator, however long or odd, answers an empty page (SPEC 4.5 rule 1, SPEC §7)', async () => {
    for (const cursor of ['x'.repeat(65), 'x'.repeat(2000), "'; DROP TABLE colaborador; --", 'ç/ü?&']) {
      expect((await listar({ cursor })).body).toEqual({ itens: [], proximo_cursor: null, tamanho: 50 });
      expect((await it.api.get('/colaborador/autocomplete', { token, query: { cursor } })).body).toEqual({ itens: [], proximo_cursor: null, tamanho: 10 });
    }
  });

  test('bad input answers 400 problem+json naming the parameter: ativo not a boolean', async () => {
    const ruim = esperarProblema(await listar({ ativo: 'talvez' }), 400);
    expect(ruim.errors).toEqual([expect.objectContaining({ campo: 'ativo' })]);
    const total = esperarProblema(await it.api.get('/colaborador/total', { token, query: { ativo: 'sim' } }), 400);
    expect(total.errors).toEqual([expect.objectContaining({ campo: 'ativo' })]);
  });
});

describe('GET /colaborador/autocomplete: cursor page of {id, nome, email} (SPEC 4.5, SPEC §8)', () => {
  const auto = (query: Record<string, string | number>) => it.api.get('/colaborador/autocomplete', { token, query });

  test('items are only id, nome and email, in (nome, id) order; tamanho defaults to 10', async () => {
    const res = await auto({ busca: tag });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      itens: ordenadas.slice(0, 10).map(({ id, nome, email }) => ({ id, nome, email })),
      proximo_cursor: ordenadas[9].id,
      tamanho: 10,
    });
  });

  test('busca matches a case-insensitive substring of the name or of the e-mail', async () => {
    const porEmail = await auto({ busca: dominio.toUpperCase(), tamanho: 100 });
    expect(porEmail.body.itens).toHaveLength(100);
    expect(porEmail.body.itens.every((c: any) => c.email.endsWith(dominio))).toBe(true);
    const porNome = await auto({ busca: `${tag.toLowerCase()} 05`, tamanho: 100 });
    expect(ids(porNome.body.itens)).toEqual(ids(ordenadas.filter((l) => l.nome.startsWith(`${tag} 05`))));
    expect(porNome.body.proximo_cursor).toBeNull();
  });

  test('following proximo_cursor walks every match once, in order', async () => {
    const vistos: any[] = [];
    let cursor: string | undefined;
    do {
      const res = await auto({ busca: tag, tamanho: 35, ...(cursor ? { cursor } : {}) });
      expect(res.body.tamanho).toBe(35);
      vistos.push(...res.body.itens);
      cursor = res.body.proximo_cursor ?? undefined;
    } while (cursor);
    expect(ids(vistos)).toEqual(ids(ordenadas));
  });

  test('tamanho above 100 is clamped to 100', async () => {
    const res = await auto({ busca: tag, tamanho: 500 });
    expect(res.status).toBe(200);
    expect(res.body.tamanho).toBe(100);
    expect(ids(res.body.itens)).toEqual(ids(ordenadas.slice(0, 100)));
  });

  test.each(['dez', '2.5'])('a non-integer tamanho (%s) answers 400 problem+json (DESIGN §4)', async (tamanho) => {
    const problema = esperarProblema(await auto({ busca: tag, tamanho }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'tamanho' })]);
  });

  test('a cursor with a nonexistent id answers an empty page', async () => {
    expect((await auto({ cursor: randomUUID() })).body).toEqual({ itens: [], proximo_cursor: null, tamanho: 10 });
  });
});
