import { randomUUID } from 'node:crypto';
import { Connection } from 'mysql2/promise';
import { novaConexao } from '../../lib/database';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DA_ASSINATURA, chaves, Hub, hubDe, RFC3339, unico, URL_LOCAL } from './apoio-admin';

/** Creation and update rules of subscriptions: POST and PATCH /assinatura (SPEC 4.3 rules 6 to 10, SPEC §7, DESIGN §4). */

let suite: SuiteDeTeste;
let hub: Hub;
let admin: string;
const tag = unico('Regra');
let dono: any;
let assinante: any;
let outro: any;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub']);
  hub = hubDe(suite);
  admin = await hub.admin();
  [dono, assinante, outro] = await hub.aplicativos(`${tag} Dono`, `${tag} Assinante`, `${tag} Outro`);
});
afterAll(() => suite.encerrar());

/** A fresh type of the owner with `versoes` active versions: each test subscribes to its own. */
const novoTipo = (versoes = 1) => hub.criarTipo(dono.id, { versoes });
const criar = (body: Record<string, unknown>) => hub.api.post('/assinatura', { token: admin, body });
const corpo = (tipo: any, campos: Record<string, unknown> = {}) => ({
  aplicativo_assinante_id: assinante.id,
  tipo_de_evento_id: tipo.id,
  url_de_destino: URL_LOCAL,
  versao_do_esquema: 1,
  ...campos,
});
const doTipo = async (tipo: any) => (await hub.api.get('/assinatura/filtro', { token: admin, query: { tipo_de_evento_id: tipo.id } })).body;
const ler = async (id: string) => (await hub.api.get(`/assinatura/${id}`, { token: admin })).body;
const atualizar = (id: string, body: Record<string, unknown>) => hub.api.patch(`/assinatura/${id}`, { token: admin, body });

describe('POST /assinatura: what is created (SPEC 4.3 rules 6 and 8, SPEC §3)', () => {
  test('answers 201 with the Assinatura; maximo_de_tentativas and tempo_limite_em_segundos default to 5 and ativa to true (rule 8)', async () => {
    const tipo = await novoTipo();
    const res = await criar(corpo(tipo));
    expect(res.status).toBe(201);
    expect(chaves(res.body)).toEqual(CAMPOS_DA_ASSINATURA);
    expect(res.body).toEqual({
      id: expect.any(String),
      aplicativo_assinante_id: assinante.id,
      aplicativo_assinante_nome: assinante.nome,
      tipo_de_evento_id: tipo.id,
      tipo_de_evento_nome: tipo.nome,
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
    expect(await ler(res.body.id)).toEqual(res.body);
  });

  test('the optional fields are nullable: null takes the defaults (SPEC §2 AssinaturaCriar, rule 8)', async () => {
    const res = await criar(corpo(await novoTipo(), { ativa: null, maximo_de_tentativas: null, tempo_limite_em_segundos: null }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ativa: true, maximo_de_tentativas: 5, tempo_limite_em_segundos: 5 });
  });

  test('values sent are kept: ativa false, the largest attempts and time-out', async () => {
    const res = await criar(corpo(await novoTipo(), { ativa: false, maximo_de_tentativas: 20, tempo_limite_em_segundos: 30 }));
    expect(res.status).toBe(201);
    expect(await ler(res.body.id)).toMatchObject({ ativa: false, maximo_de_tentativas: 20, tempo_limite_em_segundos: 30 });
  });

  test('the smallest attempts and time-out, 1 and 1, are accepted (rule 8)', async () => {
    const res = await criar(corpo(await novoTipo(), { maximo_de_tentativas: 1, tempo_limite_em_segundos: 1 }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ maximo_de_tentativas: 1, tempo_limite_em_segundos: 1 });
  });
});

describe('POST /assinatura: references (SPEC 4.3 rule 6, SPEC §7, DESIGN §4: 422)', () => {
  test('an unknown subscriber application answers 422 naming aplicativo_assinante_id, and creates nothing', async () => {
    const tipo = await novoTipo();
    const problema = esperarProblema(await criar(corpo(tipo, { aplicativo_assinante_id: randomUUID() })), 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'aplicativo_assinante_id' })]);
    expect(await doTipo(tipo)).toEqual([]);
  });

  test('a deleted event type answers 422 naming tipo_de_evento_id, as an unknown one', async () => {
    const tipo = await novoTipo();
    expect((await hub.api.del(`/tipo_de_evento/${tipo.id}`, { token: admin })).status).toBe(204);
    const problema = esperarProblema(await criar(corpo(tipo)), 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'tipo_de_evento_id' })]);
    expect(await doTipo(tipo)).toEqual([]);
  });

  test('an unknown event type answers 422 naming tipo_de_evento_id', async () => {
    const antes = await hub.todasAsAssinaturas();
    const problema = esperarProblema(await criar({ ...corpo({ id: randomUUID() }) }), 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'tipo_de_evento_id' })]);
    expect(await hub.todasAsAssinaturas()).toEqual(antes);
  });

  test('a version the type does not have answers 422 naming versao_do_esquema, even when another type has it', async () => {
    const tipo = await novoTipo(1);
    await novoTipo(3);
    for (const versao_do_esquema of [2, 3]) {
      const problema = esperarProblema(await criar(corpo(tipo, { versao_do_esquema })), 422);
      expect(problema.errors).toEqual([expect.objectContaining({ campo: 'versao_do_esquema' })]);
    }
    expect(await doTipo(tipo)).toEqual([]);
  });

  test('a switched-off version answers 422 and creates nothing (rule 6, SPEC §9.3)', async () => {
    const tipo = await novoTipo(2);
    await hub.mudarVersao(tipo.id, 1, 'desligada');
    const problema = esperarProblema(await criar(corpo(tipo, { versao_do_esquema: 1 })), 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'versao_do_esquema' })]);
    expect(await doTipo(tipo)).toEqual([]);
    // the type's other version is still open
    expect((await criar(corpo(tipo, { versao_do_esquema: 2 }))).status).toBe(201);
  });

  test('a deprecated version is not switched off: it can still be subscribed', async () => {
    const tipo = await novoTipo();
    await hub.mudarVersao(tipo.id, 1, 'depreciada');
    const res = await criar(corpo(tipo));
    expect(res.status).toBe(201);
    expect(res.body.situacao_da_versao).toBe('depreciada');
  });
});

describe('POST /assinatura: one subscription per application and type (SPEC 4.3 rule 6, DESIGN §4: 409)', () => {
  test('a second subscription of the same application to the same type answers 409, even in another version; nothing changes', async () => {
    const tipo = await novoTipo(2);
    const primeira = (await criar(corpo(tipo))).body;
    for (const versao_do_esquema of [1, 2]) {
      const problema = esperarProblema(await criar(corpo(tipo, { versao_do_esquema, url_de_destino: 'https://outro.example/x' })), 409);
      expect(problema.code).toBe('conflito');
    }
    expect(await doTipo(tipo)).toEqual([primeira]);
  });

  test('another application may subscribe to the same type', async () => {
    const tipo = await novoTipo();
    await criar(corpo(tipo));
    const res = await criar(corpo(tipo, { aplicativo_assinante_id: outro.id }));
    expect(res.status).toBe(201);
    expect((await doTipo(tipo)).map((a: any) => a.aplicativo_assinante_id).sort()).toEqual([assinante.id, outro.id].sort());
  });
});

describe('POST /assinatura: url_de_destino (SPEC 4.3 rule 7, SPEC §8)', () => {
  const https500 = () => {
    const base = 'https://destino.example/';
    return base + 'a'.repeat(500 - base.length);
  };

  test('500 characters are accepted; 501 answer 400 naming url_de_destino and create nothing', async () => {
    const tipo = await novoTipo();
    expect(https500()).toHaveLength(500);
    const problema = esperarProblema(await criar(corpo(tipo, { url_de_destino: `${https500()}b` })), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'url_de_destino' })]);
    expect(await doTipo(tipo)).toEqual([]);
    const res = await criar(corpo(tipo, { url_de_destino: https500() }));
    expect(res.status).toBe(201);
    expect(res.body.url_de_destino).toBe(https500());
  });

  test('https is accepted for any host', async () => {
    const res = await criar(corpo(await novoTipo(), { url_de_destino: 'https://assinante.example.com/webhooks/hub?x=1' }));
    expect(res.status).toBe(201);
    expect(res.body.url_de_destino).toBe('https://assinante.example.com/webhooks/hub?x=1');
  });

  test.each(['http://localhost:8080/hub', 'http://127.0.0.1:8080/hub', 'http://[::1]:8080/hub'])('http is accepted for localhost: %s', async (url_de_destino) => {
    const res = await criar(corpo(await novoTipo(), { url_de_destino }));
    expect(res.status).toBe(201);
  });

  test.each([
    ['http to another host', 'http://assinante.example.com/hook'],
    ['http to a host that only starts with localhost', 'http://localhost.example.com/hook'],
    ['http to another address of the machine\'s network', 'http://10.0.0.5/hook'],
    ['another scheme', 'ftp://localhost/hook'],
    ['not a URL', 'destino qualquer'],
    ['empty', ''],
  ])('%s answers 400 naming url_de_destino and creates nothing', async (_caso, url_de_destino) => {
    const tipo = await novoTipo();
    const problema = esperarProblema(await criar(corpo(tipo, { url_de_destino })), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'url_de_destino' })]);
    expect(await doTipo(tipo)).toEqual([]);
  });
});

describe('POST /assinatura: input (SPEC 4.3 rule 8, SPEC §2 AssinaturaCriar, DESIGN §4 and §10)', () => {
  test.each([
    ['maximo_de_tentativas', 0],
    ['maximo_de_tentativas', 21],
    ['maximo_de_tentativas', 2.5],
    ['maximo_de_tentativas', 'cinco'],
    ['tempo_limite_em_segundos', 0],
    ['tempo_limite_em_segundos', 31],
    ['tempo_limite_em_segundos', 1.5],
    ['versao_do_esquema', 0],
    ['ativa', 'sim'],
    // a JSON body's numbers and booleans are JSON numbers and booleans, not strings that look like them
    ['maximo_de_tentativas', '7'],
    ['tempo_limite_em_segundos', '5'],
    ['versao_do_esquema', '1'],
    ['ativa', 'false'],
  ])('%s = %p answers 400 naming it and creates nothing', async (campo, valor) => {
    const tipo = await novoTipo();
    const problema = esperarProblema(await criar(corpo(tipo, { [campo]: valor })), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
    expect(await doTipo(tipo)).toEqual([]);
  });

  test('each missing required field is named in one 400', async () => {
    const problema = esperarProblema(await criar({}), 400);
    expect(problema.errors.map((e: any) => e.campo).sort()).toEqual([
      'aplicativo_assinante_id',
      'tipo_de_evento_id',
      'url_de_destino',
      'versao_do_esquema',
    ]);
  });

  test('an unknown field answers 400 naming it (no secret per subscription, rule 10)', async () => {
    const tipo = await novoTipo();
    const problema = esperarProblema(await criar(corpo(tipo, { segredo: 'abc' })), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'segredo' })]);
    expect(await doTipo(tipo)).toEqual([]);
  });

  test('bad input is refused before references are looked up: 400, not 422 (DESIGN §10)', async () => {
    const res = await criar({ ...corpo({ id: randomUUID() }), aplicativo_assinante_id: randomUUID(), url_de_destino: 'http://exemplo.test/x' });
    esperarProblema(res, 400);
  });
});

describe('PATCH /assinatura/{id} (SPEC 4.3 rule 9, SPEC §3)', () => {
  const nova = async (versoes = 1, campos: Record<string, unknown> = {}) => {
    const tipo = await novoTipo(versoes);
    return { tipo, assinatura: (await criar(corpo(tipo, campos))).body };
  };
  const semData = ({ atualizada_em: _a, ...resto }: any) => resto;

  test('only the fields sent change', async () => {
    const { assinatura } = await nova();
    const res = await atualizar(assinatura.id, { url_de_destino: 'https://novo.example/hook' });
    expect(res.status).toBe(200);
    expect(semData(res.body)).toEqual({ ...semData(assinatura), url_de_destino: 'https://novo.example/hook' });
    expect(Date.parse(res.body.atualizada_em)).toBeGreaterThanOrEqual(Date.parse(assinatura.atualizada_em));
    const outra = await atualizar(assinatura.id, { maximo_de_tentativas: 9 });
    expect(semData(outra.body)).toEqual({ ...semData(assinatura), url_de_destino: 'https://novo.example/hook', maximo_de_tentativas: 9 });
    expect(await ler(assinatura.id)).toEqual(outra.body);
  });

  test('ativa "false" (a string) is refused with 400 naming it; the subscription stays active', async () => {
    const { assinatura } = await nova();
    expect(esperarProblema(await atualizar(assinatura.id, { ativa: 'false' }), 400).errors).toEqual([expect.objectContaining({ campo: 'ativa' })]);
    expect(await ler(assinatura.id)).toEqual(assinatura);
  });

  test('every updatable field can be sent at once', async () => {
    const { assinatura } = await nova(2);
    const body = { ativa: false, maximo_de_tentativas: 20, tempo_limite_em_segundos: 30, url_de_destino: 'https://x.example/y', versao_do_esquema: 2 };
    const res = await atualizar(assinatura.id, body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject(body);
    expect(await ler(assinatura.id)).toEqual(res.body);
  });

  test('ativa false deactivates and ativa true reactivates (SPEC §3)', async () => {
    const { assinatura } = await nova();
    expect((await atualizar(assinatura.id, { ativa: false })).body.ativa).toBe(false);
    expect((await ler(assinatura.id)).ativa).toBe(false);
    expect((await atualizar(assinatura.id, { ativa: true })).body.ativa).toBe(true);
    expect((await ler(assinatura.id)).ativa).toBe(true);
  });

  test('null or an empty body leaves everything as it is (SPEC §2 AssinaturaAtualizar: optional and nullable)', async () => {
    const { assinatura } = await nova(1, { ativa: false, maximo_de_tentativas: 7 });
    const nulos = { ativa: null, maximo_de_tentativas: null, tempo_limite_em_segundos: null, url_de_destino: null, versao_do_esquema: null };
    expect(semData((await atualizar(assinatura.id, nulos)).body)).toEqual(semData(assinatura));
    expect(semData((await atualizar(assinatura.id, {})).body)).toEqual(semData(assinatura));
  });

  test.each(['aplicativo_assinante_id', 'tipo_de_evento_id'])(
    '%s in the body answers 400 naming it and nothing changes, even with the other fields valid (the pair never changes)',
    async (campo) => {
      const { assinatura } = await nova();
      const valor = campo === 'aplicativo_assinante_id' ? outro.id : (await novoTipo()).id;
      for (const v of [valor, assinatura[campo]]) {
        const problema = esperarProblema(await atualizar(assinatura.id, { [campo]: v, maximo_de_tentativas: 3 }), 400);
        expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
      }
      expect(await ler(assinatura.id)).toEqual(assinatura);
    },
  );

  test('changing to another active version is accepted and shows its situation', async () => {
    const { tipo, assinatura } = await nova(2);
    await hub.mudarVersao(tipo.id, 2, 'depreciada');
    const res = await atualizar(assinatura.id, { versao_do_esquema: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ versao_do_esquema: 2, situacao_da_versao: 'depreciada' });
  });

  test('changing to a switched-off version answers 422 and nothing changes', async () => {
    const { tipo, assinatura } = await nova(2);
    await hub.mudarVersao(tipo.id, 2, 'desligada');
    const problema = esperarProblema(await atualizar(assinatura.id, { versao_do_esquema: 2, url_de_destino: 'https://mudou.example/x' }), 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'versao_do_esquema' })]);
    expect(await ler(assinatura.id)).toEqual(assinatura);
  });

  test('changing to a version the type does not have answers 422 and nothing changes', async () => {
    const { assinatura } = await nova(1);
    esperarProblema(await atualizar(assinatura.id, { versao_do_esquema: 2 }), 422);
    expect(await ler(assinatura.id)).toEqual(assinatura);
  });

  test('keeping the current version is accepted even after it was switched off', async () => {
    const { tipo, assinatura } = await nova(1);
    await hub.mudarVersao(tipo.id, 1, 'desligada');
    const res = await atualizar(assinatura.id, { versao_do_esquema: 1, url_de_destino: 'https://mantida.example/x' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ versao_do_esquema: 1, situacao_da_versao: 'desligada', url_de_destino: 'https://mantida.example/x' });
  });

  test.each([
    ['url_de_destino', 'http://assinante.example.com/hook'],
    ['url_de_destino', `https://d.example/${'a'.repeat(490)}`],
    ['url_de_destino', ''],
    ['maximo_de_tentativas', 0],
    ['maximo_de_tentativas', 21],
    ['tempo_limite_em_segundos', 0],
    ['tempo_limite_em_segundos', 31],
    ['ativa', 'não'],
    ['segredo', 'abc'],
  ])('the creation rules apply: %s = %p answers 400 naming it and nothing changes', async (campo, valor) => {
    const { assinatura } = await nova();
    const problema = esperarProblema(await atualizar(assinatura.id, { [campo]: valor }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
    expect(await ler(assinatura.id)).toEqual(assinatura);
  });

  test('an unknown id answers 404; a malformed one 400', async () => {
    esperarProblema(await atualizar(randomUUID(), { ativa: false }), 404);
    esperarProblema(await atualizar('não-é-id!', { ativa: false }), 400);
  });
});

/**
 * Writes racing each other: the test's own connection stands for the other request, holding the
 * row lock it would hold midway, and the route must wait for it and then decide on what it left.
 */
describe('racing writes keep the rules (SPEC §3, SPEC 4.3 rule 6)', () => {
  let conexao: Connection;
  beforeEach(async () => {
    conexao = await novaConexao('hub');
  });
  afterEach(() => conexao.end());

  const assinarDireto = (aplicativoId: string, tipoId: string) =>
    conexao.query(
      `INSERT INTO assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, criada_em, atualizada_em)
        VALUES (UUID(), ?, ?, 1, ?, NOW(3), NOW(3))`,
      [aplicativoId, tipoId, URL_LOCAL],
    );

  test('a subscription asked for while its application is being deleted waits, then answers 422 and is not stored', async () => {
    const [sumindo] = await hub.aplicativos(unico(`${tag} Sumindo`));
    const tipo = await novoTipo();
    await conexao.query('START TRANSACTION');
    await conexao.query('SELECT id FROM aplicativo WHERE id = ? FOR UPDATE', [sumindo.id]);
    const pedido = criar(corpo(tipo, { aplicativo_assinante_id: sumindo.id }));
    await esperarOutraConexao(conexao, 'the creation waiting on the application', ['%FROM `aplicativo`%LOCK IN SHARE MODE%']);
    await conexao.query('UPDATE aplicativo SET deletado_em = NOW(3) WHERE id = ?', [sumindo.id]);
    await conexao.query('COMMIT');

    expect(esperarProblema(await pedido, 422).errors).toEqual([expect.objectContaining({ campo: 'aplicativo_assinante_id' })]);
    const [linhas] = await conexao.query('SELECT id FROM assinatura WHERE aplicativo_assinante_id = ?', [sumindo.id]);
    expect(linhas).toEqual([]);
  });

  test('two creations of one pair at once: the one that passed the check before the other committed meets the unique key, 409 with the rule\'s own message; one subscription', async () => {
    const tipo = await novoTipo();
    await conexao.query('START TRANSACTION');
    await assinarDireto(assinante.id, tipo.id);
    const pedido = criar(corpo(tipo));
    await esperarOutraConexao(conexao, 'the creation waiting on the unique key', ['INSERT INTO `assinatura`%']);
    await conexao.query('COMMIT');

    expect(esperarProblema(await pedido, 409)).toMatchObject({ code: 'conflito', detail: expect.stringContaining('já assina este tipo de evento') });
    expect(await doTipo(tipo)).toHaveLength(1);
  });

  test('a type deleted while a subscription to it is being stored is kept: 409, as for any type with subscriptions', async () => {
    const tipo = await novoTipo();
    await conexao.query('START TRANSACTION');
    await conexao.query('SELECT id FROM tipo_de_evento WHERE id = ? LOCK IN SHARE MODE', [tipo.id]);
    const remocao = hub.api.del(`/tipo_de_evento/${tipo.id}`, { token: admin });
    await esperarOutraConexao(conexao, 'the deletion waiting on the type', ['%FROM `tipo_de_evento`%FOR UPDATE%', 'UPDATE `tipo_de_evento`%']);
    await assinarDireto(assinante.id, tipo.id);
    await conexao.query('COMMIT');

    esperarProblema(await remocao, 409);
    expect((await hub.api.get(`/tipo_de_evento/${tipo.id}`, { token: admin })).status).toBe(200);
    expect(await doTipo(tipo)).toHaveLength(1);
  });
});
