import { randomUUID } from 'node:crypto';
import { banco, novaConexao } from '../../lib/database';
import { Assinatura } from '../../models/hub';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DA_ASSINATURA, chaves, Hub, hubDe, RFC3339, semCaixa, unico, URL_LOCAL } from './apoio-admin';

/** Reads and deletion of subscriptions: GET /assinatura[/autocomplete|/filtro|/{id}] and DELETE (SPEC 4.3, SPEC §3). */

let suite: SuiteDeTeste;
let hub: Hub;
let admin: string;
const tag = unico('Ass');

/** Subscribers whose names differ in case, so a case-sensitive order would be caught. */
let alfa: any, beta: any, gama: any, dono: any;
/** Types `<tag>.alfa`, `<tag>.Beta`, `<tag>.c1`, `<tag>.c2`. */
let tipos: any[];
/** Every subscription of this file, by "<app>/<type>". */
const ass: Record<string, any> = {};

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub']);
  hub = hubDe(suite);
  admin = await hub.admin();
  // the sort keys made against their order, each synced alone (one sync registers identity's new
  // applications in name order): ids and creation times run opposite to the names, so only an
  // order by name passes
  [gama] = await hub.aplicativos(`${tag} Gama`);
  [beta] = await hub.aplicativos(`${tag} beta`);
  [alfa] = await hub.aplicativos(`${tag} Alfa`);
  [dono] = await hub.aplicativos(`${tag} Dono`);
  tipos = [];
  for (const nome of ['c2', 'c1', 'Beta', 'alfa']) tipos.unshift(await hub.criarTipo(dono.id, { nome: `${tag}.${nome}`, versoes: 2 }));
  // the subscriptions too: the reads must sort them
  const pares: [any, number][] = [
    [gama, 0], [beta, 1], [alfa, 1], [beta, 0], [alfa, 0], [gama, 3], [alfa, 2], [beta, 3], [gama, 2], [beta, 2], [alfa, 3], [gama, 1],
  ];
  for (const [app, t] of pares) {
    ass[`${app.nome}/${tipos[t].nome}`] = await hub.criarAssinatura({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[t].id });
  }
});
afterAll(() => suite.encerrar());

const ordemEsperada = () =>
  Object.values(ass).sort(
    (a, b) => semCaixa(a.aplicativo_assinante_nome, b.aplicativo_assinante_nome) || semCaixa(a.tipo_de_evento_nome, b.tipo_de_evento_nome),
  );
const ids = (xs: any[]) => xs.map((x) => x.id);
const destaSuite = (xs: any[]) => xs.filter((x) => String(x.aplicativo_assinante_nome).startsWith(tag));
const listar = (query: Record<string, string | number> = {}) => hub.api.get('/assinatura', { token: admin, query });

describe('GET /assinatura and /assinatura/filtro: order and total (SPEC 4.3 rules 1, 2 and 4)', () => {
  test('list and filter are ordered by subscriber application name, then event type name, case-insensitively (rule 1)', async () => {
    const esperada = ordemEsperada();
    expect(esperada.slice(0, 4).map((a) => a.tipo_de_evento_nome)).toEqual(['alfa', 'Beta', 'c1', 'c2'].map((n) => `${tag}.${n}`));
    expect(ids(destaSuite(await hub.todasAsAssinaturas()))).toEqual(ids(esperada));
    const pagina = await listar({ tamanho: 1000 });
    expect(pagina.status).toBe(200);
    expect(ids(destaSuite(pagina.body.itens))).toEqual(ids(esperada));
  });

  test('pages are consecutive slices of that order, and total counts every live subscription (rule 2)', async () => {
    const todas = await hub.todasAsAssinaturas();
    expect(todas.length).toBeGreaterThanOrEqual(12);
    const vistas: any[] = [];
    for (let pagina = 1; ; pagina++) {
      const res = await listar({ pagina, tamanho: 5 });
      expect(res.body).toEqual({ itens: expect.any(Array), pagina, tamanho: 5, total: todas.length });
      if (!res.body.itens.length) break;
      vistas.push(...res.body.itens);
    }
    expect(vistas).toEqual(todas);
  });

  test('an inactive subscription is still listed and counted, with ativa false: only deletion takes one out (rule 2, SPEC §3)', async () => {
    const alvo = ass[`${beta.nome}/${tipos[2].nome}`];
    expect((await hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { ativa: false } })).status).toBe(200);
    try {
      const res = await listar({ tamanho: 1000 });
      expect(res.body.itens.find((a: any) => a.id === alvo.id)).toMatchObject({ id: alvo.id, ativa: false });
      expect(res.body.total).toBe(await Assinatura.count());
      expect(res.body.total).toBe(res.body.itens.length);
    } finally {
      await hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { ativa: true } });
    }
  });

  test('the filter without parameters, or with empty ones, returns every live subscription (rule 4)', async () => {
    const todas = await hub.todasAsAssinaturas();
    const { body } = await listar();
    expect(todas).toHaveLength(body.total);
    const vazios = await hub.api.get('/assinatura/filtro', {
      token: admin,
      query: { aplicativo_assinante_id: '', tipo_de_evento_id: '', ativa: '' },
    });
    expect(vazios.status).toBe(200);
    expect(vazios.body).toEqual(todas);
  });
});

describe('GET /assinatura: pagina and tamanho (SPEC 4.3, SPEC §8, DESIGN §4)', () => {
  test('pagina defaults to 1 and tamanho to 10', async () => {
    const res = await listar();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ pagina: 1, tamanho: 10 });
    expect(ids(res.body.itens)).toEqual(ids((await hub.todasAsAssinaturas()).slice(0, 10)));
  });

  test('values below 1 become 1', async () => {
    const todas = await hub.todasAsAssinaturas();
    for (const [pagina, tamanho] of [[0, 0], [-3, -7]]) {
      const res = await listar({ pagina, tamanho });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ itens: [todas[0]], pagina: 1, tamanho: 1, total: todas.length });
    }
  });

  test('tamanho has no maximum', async () => {
    const res = await listar({ tamanho: 100000 });
    expect(res.status).toBe(200);
    expect(res.body.tamanho).toBe(100000);
    expect(res.body.itens).toHaveLength(res.body.total);
  });

  test.each([
    ['pagina', 'um'],
    ['pagina', '1.5'],
    ['tamanho', 'dez'],
    ['tamanho', '2.5'],
  ])('a non-integer %s (%s) answers 400 naming it', async (campo, valor) => {
    for (const caminho of ['/assinatura', '/assinatura/autocomplete']) {
      const problema = esperarProblema(await hub.api.get(caminho, { token: admin, query: { [campo]: valor } }), 400);
      expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
    }
  });
});

describe('GET /assinatura/autocomplete (SPEC 4.3 rule 3, SPEC §8)', () => {
  const auto = (query: Record<string, string | number>) => hub.api.get('/assinatura/autocomplete', { token: admin, query });

  test('items carry exactly id, subscriber name, type name, version and ativa, in the list order; tamanho defaults to 10', async () => {
    const res = await auto({ busca: tag });
    expect(res.status).toBe(200);
    const esperada = ordemEsperada();
    expect(res.body).toEqual({
      itens: esperada.slice(0, 10).map((a) => ({
        id: a.id,
        aplicativo_assinante_nome: a.aplicativo_assinante_nome,
        tipo_de_evento_nome: a.tipo_de_evento_nome,
        versao_do_esquema: a.versao_do_esquema,
        ativa: a.ativa,
      })),
      pagina: 1,
      tamanho: 10,
      total: esperada.length,
    });
    expect(chaves(res.body.itens[0])).toEqual(['aplicativo_assinante_nome', 'ativa', 'id', 'tipo_de_evento_nome', 'versao_do_esquema']);
    // no maximum (SPEC §8): a large tamanho is kept and holds every match
    const enorme = await auto({ busca: tag, tamanho: 100_000 });
    expect(enorme.body).toMatchObject({ pagina: 1, tamanho: 100_000, total: esperada.length });
    expect(enorme.body.itens.map((a: any) => a.id)).toEqual(esperada.map((a) => a.id));
  });

  test('busca matches a case-insensitive substring of the subscriber name', async () => {
    const res = await auto({ busca: `${tag.toLowerCase()} BETA` });
    expect(ids(res.body.itens)).toEqual(ids(ordemEsperada().filter((a) => a.aplicativo_assinante_id === beta.id)));
    expect(res.body.total).toBe(4);
  });

  test('busca matches a case-insensitive substring of the event type name', async () => {
    const res = await auto({ busca: `${tag}.BETA`.toLowerCase() });
    expect(res.body.itens.map((a: any) => [a.aplicativo_assinante_nome, a.tipo_de_evento_nome])).toEqual([
      [alfa.nome, `${tag}.Beta`],
      [beta.nome, `${tag}.Beta`],
      [gama.nome, `${tag}.Beta`],
    ]);
  });

  test('busca matches nothing else (the URL is not searched), and % is a literal character', async () => {
    expect((await auto({ busca: 'localhost' })).body).toEqual({ itens: [], pagina: 1, tamanho: 10, total: 0 });
    expect((await auto({ busca: `${tag}%` })).body.total).toBe(0);
  });

  test('pagina and tamanho page through the matches; values below 1 become 1', async () => {
    const esperada = ordemEsperada();
    const p2 = await auto({ busca: tag, pagina: 2, tamanho: 5 });
    expect(ids(p2.body.itens)).toEqual(ids(esperada.slice(5, 10)));
    const minimo = await auto({ busca: tag, pagina: 0, tamanho: 0 });
    expect(minimo.body).toMatchObject({ pagina: 1, tamanho: 1, total: esperada.length });
    expect(ids(minimo.body.itens)).toEqual([esperada[0].id]);
  });

  test('without busca every live subscription counts', async () => {
    const { body } = await auto({});
    expect(body.total).toBe((await hub.todasAsAssinaturas()).length);
  });
});

describe('GET /assinatura/filtro: exact values (SPEC 4.3 rule 4)', () => {
  const filtro = async (query: Record<string, string>) => {
    const res = await hub.api.get('/assinatura/filtro', { token: admin, query });
    expect(res.status).toBe(200);
    return res.body as any[];
  };

  test('aplicativo_assinante_id returns that subscriber’s subscriptions only, in order', async () => {
    expect(ids(await filtro({ aplicativo_assinante_id: gama.id }))).toEqual(ids(ordemEsperada().filter((a) => a.aplicativo_assinante_id === gama.id)));
    expect(await filtro({ aplicativo_assinante_id: dono.id })).toEqual([]);
  });

  test('tipo_de_evento_id returns that type’s subscriptions only', async () => {
    const doTipo = await filtro({ tipo_de_evento_id: tipos[2].id });
    expect(doTipo.map((a) => [a.aplicativo_assinante_nome, a.tipo_de_evento_nome])).toEqual([
      [alfa.nome, tipos[2].nome],
      [beta.nome, tipos[2].nome],
      [gama.nome, tipos[2].nome],
    ]);
  });

  test('ativa filters by status, and the filters combine', async () => {
    const alvo = ass[`${beta.nome}/${tipos[3].nome}`];
    expect((await hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { ativa: false } })).status).toBe(200);
    try {
      const inativas = await filtro({ ativa: 'false' });
      expect(inativas.every((a) => a.ativa === false)).toBe(true);
      expect(ids(destaSuite(inativas))).toEqual([alvo.id]);
      const ativas = await filtro({ ativa: 'true' });
      expect(ativas.every((a) => a.ativa === true)).toBe(true);
      expect(ativas.length + inativas.length).toBe((await hub.todasAsAssinaturas()).length);
      expect(ids(await filtro({ aplicativo_assinante_id: beta.id, ativa: 'false' }))).toEqual([alvo.id]);
      expect(await filtro({ aplicativo_assinante_id: alfa.id, ativa: 'false' })).toEqual([]);
      expect(ids(await filtro({ aplicativo_assinante_id: beta.id, tipo_de_evento_id: tipos[3].id, ativa: 'false' }))).toEqual([alvo.id]);
    } finally {
      await hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { ativa: true } });
    }
  });

  test('an id nobody has matches nothing; a malformed id or ativa answers 400', async () => {
    expect(await filtro({ tipo_de_evento_id: randomUUID() })).toEqual([]);
    esperarProblema(await hub.api.get('/assinatura/filtro', { token: admin, query: { aplicativo_assinante_id: 'a b' } }), 400);
    const problema = esperarProblema(await hub.api.get('/assinatura/filtro', { token: admin, query: { ativa: 'talvez' } }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'ativa' })]);
  });
});

describe('GET /assinatura/{id}: the Assinatura (SPEC §2, SPEC 4.3 rule 5)', () => {
  test('carries exactly the fields of SPEC §2, with names, version situation, error-queue count 0, no delivery yet and RFC 3339 dates', async () => {
    const criada = ass[`${alfa.nome}/${tipos[1].nome}`];
    const res = await hub.api.get(`/assinatura/${criada.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(chaves(res.body)).toEqual(CAMPOS_DA_ASSINATURA);
    expect(res.body).toEqual({
      id: criada.id,
      aplicativo_assinante_id: alfa.id,
      aplicativo_assinante_nome: `${tag} Alfa`,
      tipo_de_evento_id: tipos[1].id,
      tipo_de_evento_nome: `${tag}.Beta`,
      versao_do_esquema: 1,
      situacao_da_versao: 'ativa',
      url_de_destino: URL_LOCAL,
      maximo_de_tentativas: 5,
      tempo_limite_em_segundos: 5,
      ativa: true,
      entregas_na_fila_de_erro: 0,
      ultima_entrega_em: null,
      criada_em: expect.stringMatching(RFC3339),
      atualizada_em: expect.stringMatching(RFC3339),
    });
    expect(Date.parse(res.body.atualizada_em)).toBeGreaterThanOrEqual(Date.parse(res.body.criada_em));
  });

  test('the item of the list and of the filter is the same Assinatura', async () => {
    const criada = ass[`${gama.nome}/${tipos[0].nome}`];
    const porId = (await hub.api.get(`/assinatura/${criada.id}`, { token: admin })).body;
    expect((await hub.todasAsAssinaturas()).find((a) => a.id === criada.id)).toEqual(porId);
    expect((await listar({ tamanho: 1000 })).body.itens.find((a: any) => a.id === criada.id)).toEqual(porId);
  });

  test('situacao_da_versao follows the version of the type', async () => {
    const criada = ass[`${gama.nome}/${tipos[1].nome}`];
    await hub.mudarVersao(tipos[1].id, 1, 'depreciada');
    try {
      expect((await hub.api.get(`/assinatura/${criada.id}`, { token: admin })).body.situacao_da_versao).toBe('depreciada');
      await hub.mudarVersao(tipos[1].id, 1, 'desligada');
      expect((await hub.api.get(`/assinatura/${criada.id}`, { token: admin })).body.situacao_da_versao).toBe('desligada');
    } finally {
      await hub.mudarVersao(tipos[1].id, 1, 'ativa');
    }
  });

  test('an unknown id answers 404 problem+json; a malformed id 400', async () => {
    expect(esperarProblema(await hub.api.get(`/assinatura/${randomUUID()}`, { token: admin }), 404).code).toBe('nao_encontrado');
    esperarProblema(await hub.api.get(`/assinatura/${encodeURIComponent('não é id')}`, { token: admin }), 400);
  });
});

describe('DELETE /assinatura/{id} (SPEC §3 Subscription activity, SPEC 4.3 rules 1, 2 and 5, SPEC §7)', () => {
  test('answers 204 with no body; the subscription vanishes from id, list, filter, autocomplete and total', async () => {
    const [app] = await hub.aplicativos(`${tag} Removida`);
    const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[0].id });
    const antes = (await listar()).body.total;

    const res = await hub.api.del(`/assinatura/${alvo.id}`, { token: admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    expect(esperarProblema(await hub.api.get(`/assinatura/${alvo.id}`, { token: admin }), 404).code).toBe('nao_encontrado');
    const depois = await listar({ tamanho: 1000 });
    expect(depois.body.total).toBe(antes - 1);
    expect(ids(depois.body.itens)).not.toContain(alvo.id);
    expect(ids(await hub.todasAsAssinaturas())).not.toContain(alvo.id);
    const filtro = await hub.api.get('/assinatura/filtro', { token: admin, query: { aplicativo_assinante_id: app.id } });
    expect(filtro.body).toEqual([]);
    const auto = await hub.api.get('/assinatura/autocomplete', { token: admin, query: { busca: `${tag} Removida` } });
    expect(auto.body).toMatchObject({ itens: [], total: 0 });
  });

  test('a deleted subscription cannot be deleted or changed again: 404', async () => {
    const [app] = await hub.aplicativos(`${tag} Duas vezes`);
    const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[0].id });
    expect((await hub.api.del(`/assinatura/${alvo.id}`, { token: admin })).status).toBe(204);
    esperarProblema(await hub.api.del(`/assinatura/${alvo.id}`, { token: admin }), 404);
    esperarProblema(await hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { ativa: true } }), 404);
    esperarProblema(await hub.api.del(`/assinatura/${randomUUID()}`, { token: admin }), 404);
  });

  test('two DELETEs, or a PATCH and a DELETE, at the same time: the one that comes second answers 404 and changes nothing', async () => {
    const [app] = await hub.aplicativos(`${tag} Ao mesmo tempo`);
    for (const segundo of ['del', 'patch'] as const) {
      const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[1].id });
      const trava = await novaConexao('hub');
      try {
        // both have found the subscription, and wait on its row, held here
        await trava.beginTransaction();
        await trava.query('SELECT id FROM assinatura WHERE id = ? FOR UPDATE', [alvo.id]);
        const primeiro = hub.api.del(`/assinatura/${alvo.id}`, { token: admin });
        await esperarOutraConexao(trava, 'the first waiting on the subscription', ['%FROM `assinatura`%FOR UPDATE%', 'UPDATE `assinatura`%']);
        const depois =
          segundo === 'del'
            ? hub.api.del(`/assinatura/${alvo.id}`, { token: admin })
            : hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { url_de_destino: 'https://depois.example.test/x' } });
        await esperarOutraConexao(trava, 'both waiting on the subscription', ['%FROM `assinatura`%FOR UPDATE%', 'UPDATE `assinatura`%'], 2);
        await trava.commit();
        expect((await primeiro).status).toBe(204);
        esperarProblema(await depois, 404);
      } finally {
        await trava.end();
      }
      const [[linha]] = (await banco('hub').query('SELECT url_de_destino FROM assinatura WHERE id = ?', { replacements: [alvo.id] })) as any;
      expect(linha.url_de_destino).toBe(alvo.url_de_destino);
    }
  });

  test('the same application may subscribe to the same event type again, as a new subscription', async () => {
    const [app] = await hub.aplicativos(`${tag} De novo`);
    const primeira = await hub.criarAssinatura({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[2].id });
    expect((await hub.api.del(`/assinatura/${primeira.id}`, { token: admin })).status).toBe(204);
    const res = await hub.api.post('/assinatura', {
      token: admin,
      body: { aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[2].id, versao_do_esquema: 2, url_de_destino: URL_LOCAL },
    });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(primeira.id);
    expect(res.body).toMatchObject({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[2].id, versao_do_esquema: 2, ativa: true });
    const doApp = await hub.api.get('/assinatura/filtro', { token: admin, query: { aplicativo_assinante_id: app.id } });
    expect(ids(doApp.body)).toEqual([res.body.id]);
  });

  test('deleting one subscription leaves the others untouched', async () => {
    const antes = await hub.todasAsAssinaturas();
    const [app] = await hub.aplicativos(`${tag} Sozinha`);
    const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: app.id, tipo_de_evento_id: tipos[1].id });
    expect((await hub.api.del(`/assinatura/${alvo.id}`, { token: admin })).status).toBe(204);
    expect(await hub.todasAsAssinaturas()).toEqual(antes);
  });
});
