import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { createConnection } from 'mysql2/promise';
import { DatabaseError, HostNotFoundError, Sequelize } from 'sequelize';
import http from 'node:http';
import Joi from 'joi';
import { criarApp, PRAZO_DA_PRONTIDAO_MS } from '../../api/shared/app';
import { Autenticador } from '../../api/shared/auth';
import { ErroDeDominio, naoAutenticado } from '../../api/shared/errors';
import { RespostaDeErroDoIdentity } from '../../api/shared/leitura-do-identity';
import { TokenRecusado } from '../../queues/fila';
import { id, pagina, tamanho } from '../../api/shared/paginacao';
import { Rota } from '../../api/shared/rotas';
import { esperarAte } from '../helpers/espera';
import { chamar, cliente, esperarProblema } from '../helpers/http';
import type { Registro } from '../helpers/registros';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('http', ['error', 'warn'], () => mockRegistros));

/** The shared HTTP layer alone (DESIGN §4), on a service of its own with a fake key check. */
const autenticar: Autenticador = async (token) => {
  if (token !== 'valido') throw naoAutenticado();
  return { sub: 'u1', tipo: 'usuario', master: false, nome: 'U', emitidoEm: 0, token };
};

let prontoFalha = false;
/** a dependency that stops answering (a frozen server): its check never settles */
let prontoSemResposta = false;
const SOCKET_AUSENTE = path.join(tmpdir(), `sem-banco-${process.pid}.sock`);
const rotas: Rota[] = [
  {
    metodo: 'get',
    caminho: '/paginas',
    operacao: 'paginas',
    resumo: 'eco',
    acesso: 'publico',
    validar: { query: Joi.object({ pagina: pagina(), tamanho: tamanho(10, 500) }) },
    tratar: (req) => req.entrada.query,
  },
  {
    metodo: 'post',
    caminho: '/eco',
    operacao: 'eco',
    resumo: 'eco',
    acesso: 'usuario',
    validar: { body: Joi.object({ nome: Joi.string().required() }).required() },
    tratar: (req) => req.entrada.body,
  },
  {
    metodo: 'post',
    caminho: '/livre',
    operacao: 'livre',
    resumo: 'any object, written back as text (as a webhook or an event stores it)',
    acesso: 'publico',
    validar: { body: Joi.object().unknown(true).required() },
    tratar: (req) => ({ texto: JSON.stringify(req.entrada.body).length }),
  },
  {
    metodo: 'get',
    caminho: '/formato',
    operacao: 'formato',
    resumo: 'pattern rules without a message of their own, and an id',
    acesso: 'publico',
    validar: { query: Joi.object({ codigo: Joi.string().pattern(/^[0-9]{3}$/), sem_x: Joi.string().pattern(/x/, { invert: true }), id: id() }) },
    tratar: (req) => req.entrada.query,
  },
  { metodo: 'get', caminho: '/item/:id', operacao: 'item', resumo: 'item', acesso: 'publico', tratar: (req) => ({ id: req.params.id }) },
  { metodo: 'delete', caminho: '/item/:id', operacao: 'apagar_item', resumo: 'item', acesso: 'publico', tratar: () => undefined },
  { metodo: 'post', caminho: '/item/especial', operacao: 'item_especial', resumo: 'item', acesso: 'publico', semCorpo: true, tratar: () => ({ especial: true }) },
  {
    metodo: 'get',
    caminho: '/quebra',
    operacao: 'quebra',
    resumo: 'falha interna',
    acesso: 'publico',
    tratar: (_req, res) => {
      // a route that lets caches keep its answers, failing: the failure must not be kept
      res.setHeader('Cache-Control', 'public, max-age=3600');
      throw new Error("ER_PARSE_ERROR: You have an error in your SQL syntax near 'SELECT * FROM usuario' at /app/x.ts:1:2");
    },
  },
  // identity refusing the service's own token, or answering an error, while the route read from it:
  // the service's failure, not the caller's
  {
    metodo: 'get',
    caminho: '/identity-recusou/:qual',
    operacao: 'identity_recusou',
    resumo: 'identity refused what the service asked',
    acesso: 'publico',
    tratar: (req) => {
      if (req.params.qual === 'token') throw new TokenRecusado(401, 'identity refused the token (401) to GET /usuario/filtro');
      throw new RespostaDeErroDoIdentity(404, 'identity answered 404 to GET /usuario/x');
    },
  },
  // an error carrying a status of its own, as an HTTP client's may for what another server answered
  {
    metodo: 'get',
    caminho: '/status-alheio',
    operacao: 'status_alheio',
    resumo: 'an outgoing call answered 404',
    acesso: 'publico',
    tratar: () => {
      throw Object.assign(new Error('GET https://outro.exemplo/x answered 404'), { status: 404, statusCode: 404 });
    },
  },
  // the database out of reach, for real: a Unix socket not there (yet), as MYSQL_URL's socketPath may name
  {
    metodo: 'get',
    caminho: '/banco-sem-socket',
    operacao: 'banco_sem_socket',
    resumo: 'mysql2 against a missing socket',
    acesso: 'publico',
    tratar: async () => (await createConnection({ socketPath: SOCKET_AUSENTE, user: 'root' })).end(),
  },
  {
    metodo: 'get',
    caminho: '/sequelize-sem-socket',
    operacao: 'sequelize_sem_socket',
    resumo: 'Sequelize against a missing socket',
    acesso: 'publico',
    tratar: async () => {
      const sequelize = new Sequelize({ dialect: 'mysql', dialectOptions: { socketPath: SOCKET_AUSENTE }, username: 'root', logging: false, pool: { max: 1 } });
      try {
        await sequelize.query('SELECT 1');
      } finally {
        await sequelize.close();
      }
    },
  },
  // as Sequelize wraps what mysql2 says: a connection lost mid-statement, a host not found
  {
    metodo: 'get',
    caminho: '/conexao-perdida',
    operacao: 'conexao_perdida',
    resumo: 'a statement whose connection was lost',
    acesso: 'publico',
    tratar: () => {
      throw new DatabaseError(Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true, sql: 'SELECT 1' }) as never);
    },
  },
  {
    metodo: 'get',
    caminho: '/host-desconhecido',
    operacao: 'host_desconhecido',
    resumo: 'a database host whose name does not resolve',
    acesso: 'publico',
    tratar: () => {
      throw new HostNotFoundError(Object.assign(new Error('getaddrinfo ENOTFOUND mysql'), { code: 'ENOTFOUND', syscall: 'getaddrinfo' }) as never);
    },
  },
  // a 503 for a request that must not be sent again (a publication stored without an id)
  {
    metodo: 'get',
    caminho: '/nao-repita',
    operacao: 'nao_repita',
    resumo: 'unavailable, and not to be repeated',
    acesso: 'publico',
    tratar: () => {
      throw new ErroDeDominio('indisponivel', 'Guardado; não repita.', undefined, { retryAfterSegundos: null });
    },
  },
  {
    metodo: 'get',
    caminho: '/trava-esgotada',
    operacao: 'trava_esgotada',
    resumo: 'a statement that waited for a lock past the database limit',
    acesso: 'publico',
    tratar: () => {
      throw new DatabaseError(Object.assign(new Error('Lock wait timeout exceeded; try restarting transaction'), { code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205, sql: 'UPDATE x' }) as never);
    },
  },
  {
    metodo: 'get',
    caminho: '/arquivo-ausente',
    operacao: 'arquivo_ausente',
    resumo: 'a missing file is no database out of reach',
    acesso: 'publico',
    tratar: async () => readFile(SOCKET_AUSENTE),
  },
  {
    metodo: 'get',
    caminho: '/fluxo/:como',
    operacao: 'fluxo',
    resumo: 'a body streamed that breaks off (the disk failing) or never ends (the client leaves)',
    acesso: 'publico',
    tratar: async (req, res) => {
      const fonte = new Readable({ read() {} });
      fonte.push('começo');
      if (req.params.como === 'quebrado') setTimeout(() => fonte.destroy(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })), 50);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      await pipeline(fonte, res);
    },
  },
];

let servidor: http.Server;
let api: ReturnType<typeof cliente>;
let base: string;
beforeAll(async () => {
  const app = criarApp({
    nome: 'teste',
    info: { title: 'teste', version: '0' },
    rotas,
    autenticar,
    pronto: async () => {
      if (prontoSemResposta) await new Promise(() => undefined);
      if (prontoFalha) throw new Error('banco fora');
    },
  });
  servidor = app.listen(0, '127.0.0.1');
  await new Promise((r) => servidor.once('listening', r));
  base = `http://127.0.0.1:${(servidor.address() as AddressInfo).port}`;
  api = cliente(base);
});
afterAll(() => new Promise((r) => (servidor.closeAllConnections(), servidor.close(r))));

describe('query parsing of pages (SPEC §2, DESIGN §4)', () => {
  test('defaults, values below 1 become 1, values over the cap become the cap', async () => {
    expect((await api.get('/paginas')).body).toEqual({ pagina: 1, tamanho: 10 });
    expect((await api.get('/paginas', { query: { pagina: 0, tamanho: -3 } })).body).toEqual({ pagina: 1, tamanho: 1 });
    expect((await api.get('/paginas', { query: { pagina: 7, tamanho: 9999 } })).body).toEqual({ pagina: 7, tamanho: 500 });
  });

  test('an integer too large for a number is still adjusted, not refused', async () => {
    const enorme = '99999999999999999999';
    expect((await api.get('/paginas', { query: { pagina: enorme, tamanho: enorme } })).body).toEqual({
      pagina: Number.MAX_SAFE_INTEGER,
      tamanho: 500,
    });
  });

  test('non-integer pagina or tamanho answers 400 naming the field', async () => {
    const p = esperarProblema(await api.get('/paginas', { query: { pagina: 'dois' } }), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'pagina' })]);
    esperarProblema(await api.get('/paginas', { query: { tamanho: '2.5' } }), 400);
    // not an integer as written, even where a number rounds it to one
    for (const escrito of ['1.00000000000000001', '3.0', '1e3', '0x10']) {
      expect({ escrito, status: (await api.get('/paginas', { query: { pagina: escrito } })).status }).toEqual({ escrito, status: 400 });
    }
  });

  test('unknown query parameters are ignored', async () => {
    expect((await api.get('/paginas', { query: { outro: 'x', pagina: 2 } })).body).toEqual({ pagina: 2, tamanho: 10 });
  });
});

describe('errors are RFC 9457 problem details (DESIGN §4)', () => {
  test('no token 401, then a bad body 400 with every field error', async () => {
    esperarProblema(await api.post('/eco', { body: {} }), 401);
    esperarProblema(await api.post('/eco', { token: 'falso', body: {} }), 401);
    const p = esperarProblema(await api.post('/eco', { token: 'valido', body: { outro: 1 } }), 400);
    expect(p.errors.map((e: any) => e.campo).sort()).toEqual(['nome', 'outro']);
  });

  test('malformed JSON answers 400, once the caller is authenticated (401 first, DESIGN §10)', async () => {
    esperarProblema(await api.post('/eco', { raw: '{"nome": ' }), 401);
    esperarProblema(await api.post('/eco', { token: 'falso', raw: '{"nome": ' }), 401);
    const p = esperarProblema(await api.post('/eco', { token: 'valido', raw: '{"nome": ' }), 400);
    expect(p).toMatchObject({ code: 'dados_invalidos', detail: 'O corpo não é um JSON válido.' });
  });

  test('a body in an encoding or charset the parser does not read answers 415, once the caller is authenticated (401 first, DESIGN §10)', async () => {
    const cabecalhos: Record<string, string>[] = [{ 'content-encoding': 'compress' }, { 'content-type': 'application/json; charset=koi8-r' }];
    for (const headers of cabecalhos) {
      esperarProblema(await api.post('/eco', { raw: '{"nome": "x"}', headers }), 401);
      esperarProblema(await api.post('/eco', { token: 'falso', raw: '{"nome": "x"}', headers }), 401);
      expect(esperarProblema(await api.post('/eco', { token: 'valido', raw: '{"nome": "x"}', headers }), 415).code).toBe('codificacao_nao_suportada');
    }
  });

  test('a body in a Content-Type other than JSON answers 415 (JSON only, DESIGN §4), once the caller is authenticated, without being read; no body at all is still a 400', async () => {
    const headers = { 'content-type': 'text/plain' };
    esperarProblema(await api.post('/eco', { raw: '{"nome": "x"}', headers }), 401);
    const p = esperarProblema(await api.post('/eco', { token: 'valido', raw: '{"nome": "x"}', headers }), 415);
    expect(p).toMatchObject({ code: 'tipo_nao_suportado', detail: expect.stringContaining('application/json') });
    // two mebibytes, past the limit a JSON body would have: refused for its type, not its size
    expect(esperarProblema(await api.post('/eco', { token: 'valido', raw: 'x'.repeat(2 * 1024 * 1024), headers }), 415).code).toBe('tipo_nao_suportado');
    expect(esperarProblema(await api.post('/eco', { token: 'valido', raw: '', headers }), 400).code).toBe('dados_invalidos');
  });

  test('a body nested past 100 levels answers 400, however deep (no stack overflow, no 500); 100 levels are taken', async () => {
    const aninhado = (n: number) => `${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`;
    for (const n of [101, 50_000]) {
      expect(esperarProblema(await api.post('/livre', { raw: aninhado(n) }), 400).errors).toEqual([{ campo: 'body', mensagem: 'aninhamento profundo demais' }]);
    }
    const arrays = `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    esperarProblema(await api.post('/livre', { raw: arrays }), 400);
    expect((await api.post('/livre', { raw: aninhado(100) })).status).toBe(200);
  });

  test('a __proto__ key anywhere in a body answers 400 naming where, even where unknown fields are allowed', async () => {
    const p = esperarProblema(await api.post('/livre', { raw: '{"a":[{"ok":1},{"b":{"__proto__":{"x":1}}}]}' }), 400);
    expect(p.errors).toEqual([{ campo: 'a.1.b.__proto__', mensagem: expect.stringContaining('não é permitido') }]);
    expect((await api.post('/livre', { raw: '{"a":[{"proto":1}],"constructor":{}}' })).status).toBe(200);
  });

  test('a number out of JSON\'s range (parsed as Infinity) anywhere in a body answers 400 naming where, even where any value is allowed', async () => {
    const p = esperarProblema(await api.post('/livre', { raw: '{"a":[1,{"b":-1e999}]}' }), 400);
    expect(p.errors).toEqual([{ campo: 'a.1.b', mensagem: 'número fora do alcance' }]);
    expect(esperarProblema(await api.post('/livre', { raw: '[1e400]' }), 400).errors).toEqual([{ campo: '0', mensagem: 'número fora do alcance' }]);
    expect((await api.post('/livre', { raw: '{"a":[1.7976931348623157e308,-5e-324,0]}' })).status).toBe(200);
  });

  test('a value out of a pattern rule\'s form is named in words, never by the rule\'s expression', async () => {
    const p = esperarProblema(await api.get('/formato?codigo=12a&sem_x=axb&id=a%24b'), 400);
    expect(p.errors).toEqual([
      { campo: 'codigo', mensagem: 'codigo não está no formato esperado' },
      { campo: 'sem_x', mensagem: 'sem_x não está no formato esperado' },
      { campo: 'id', mensagem: 'id deve ter de 1 a 64 letras, dígitos, - ou _' },
    ]);
    expect((await api.get('/formato?codigo=123&sem_x=ab&id=A-b')).body).toEqual({ codigo: '123', sem_x: 'ab', id: 'a-b' });
  });

  test('a body over 1 MiB answers 413', async () => {
    esperarProblema(await api.post('/eco', { token: 'valido', raw: JSON.stringify({ nome: 'x'.repeat(1_100_000) }) }), 413);
  });

  test('an unknown route answers 404, whatever its body (only routes that take a body parse one)', async () => {
    esperarProblema(await api.get('/nada'), 404);
    esperarProblema(await api.post('/nada', { raw: '{"quebrado":' }), 404);
  });

  test('OPTIONS on a route answers 204 with the methods of its path; on an unknown path, 404', async () => {
    const eco = await chamar(base, 'OPTIONS', '/eco');
    expect(eco.status).toBe(204);
    expect(eco.headers.get('allow')).toBe('POST');
    expect((await chamar(base, 'OPTIONS', '/paginas')).headers.get('allow')).toBe('GET, HEAD');
    // every method of a path, a path with a parameter included
    expect((await chamar(base, 'OPTIONS', '/item/42')).headers.get('allow')).toBe('DELETE, GET, HEAD');
    // a path two routes match (a fixed one and one with a parameter): the methods of both
    expect((await chamar(base, 'OPTIONS', '/item/especial')).headers.get('allow')).toBe('DELETE, GET, HEAD, POST');
    esperarProblema(await chamar(base, 'OPTIONS', '/nada'), 404);
  });

  test('a method the path does not take answers 405 with the path\'s methods in Allow; an unknown path still 404', async () => {
    for (const [metodo, caminho, allow] of [
      ['GET', '/eco', 'POST'],
      ['PUT', '/item/42', 'DELETE, GET, HEAD'],
      ['POST', '/item/42', 'DELETE, GET, HEAD'],
      ['PUT', '/item/especial', 'DELETE, GET, HEAD, POST'],
      ['DELETE', '/paginas/', 'GET, HEAD'],
    ]) {
      const res = await chamar(base, metodo, caminho);
      expect(esperarProblema(res, 405).code).toBe('metodo_nao_permitido');
      expect(res.headers.get('allow')).toBe(allow);
    }
    expect((await api.post('/item/especial')).body).toEqual({ especial: true });
    esperarProblema(await chamar(base, 'PUT', '/nada'), 404);
    esperarProblema(await chamar(base, 'PUT', '/item/42/mais'), 404);
  });

  test('a 500 shows no internals and carries the request id of the response header, the one its log line carries (DESIGN §4)', async () => {
    mockRegistros.splice(0);
    const res = await api.get('/quebra', { headers: { 'x-request-id': 'req-abc-123' } });
    const p = esperarProblema(res, 500);
    expect(res.text).not.toMatch(/SQL|SELECT|usuario|x\.ts/);
    expect(p.request_id).toBe('req-abc-123');
    expect(res.headers.get('x-request-id')).toBe('req-abc-123');
    // the id support is given finds the failure in the logs, with the internals the body leaves out
    const errosInternos = () => mockRegistros.filter((r) => r.args[1] === 'erro interno').map((r) => r.args[0] as Record<string, any>);
    expect(errosInternos()).toEqual([expect.objectContaining({ request_id: 'req-abc-123' })]);
    expect(errosInternos()[0].err.message).toMatch(/ER_PARSE_ERROR/);
    // an id the server makes up (none sent) is the same in the body, the header and the log line
    mockRegistros.splice(0);
    const gerado = await api.get('/quebra');
    const id = esperarProblema(gerado, 500).request_id;
    expect(id).toEqual(expect.any(String));
    expect(gerado.headers.get('x-request-id')).toBe(id);
    expect(errosInternos()).toEqual([expect.objectContaining({ request_id: id })]);
    // the route had said caches could keep its answer: not this one
    expect(res.headers.get('cache-control')).toBeNull();
  });
});

test("identity refusing the service's own token or answering an error is the service's failure: 500, not the caller's 401 or 404", async () => {
  for (const qual of ['token', 'resposta']) {
    const res = await api.get(`/identity-recusou/${qual}`);
    esperarProblema(res, 500);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(res.text).not.toMatch(/identity|usuario/);
  }
});

test("an error's own 4xx status is the caller's only when the HTTP layer meant it so: a path parameter that does not decode 400, an outgoing call's 404 a 500", async () => {
  expect(esperarProblema(await api.get('/item/%E0%A4%A'), 400).code).toBe('requisicao_invalida');
  const res = await api.get('/status-alheio');
  esperarProblema(res, 500);
  expect(res.text).not.toMatch(/outro\.exemplo/);
});

describe('a streamed answer that breaks off', () => {
  // node's own http (nock's interception keeps the answer of a request the client cut open, and
  // with it the test process): every call here is on loopback
  beforeAll(() => nock.restore());
  afterAll(() => nock.activate());
  const interrompidas = () => mockRegistros.filter((r) => r.args[1] === 'resposta interrompida');
  const recebido = (caminho: string, aoComecar: (req: http.ClientRequest) => void = () => undefined) =>
    new Promise<{ bytes: string; erro?: string }>((resolve) => {
      const req = http.get(`${base}${caminho}`, (res) => {
        let bytes = '';
        res.on('data', (p) => ((bytes += p), aoComecar(req)));
        res.on('error', (err) => resolve({ bytes, erro: err.message }));
        res.on('end', () => resolve({ bytes }));
      });
      req.on('error', (err) => resolve({ bytes: '', erro: err.message }));
    });

  test('failing on our side (the disk mid-read) is logged with the request id, and the client sees the answer cut', async () => {
    mockRegistros.splice(0);
    const r = await recebido('/fluxo/quebrado');
    expect(r).toEqual({ bytes: 'começo', erro: expect.any(String) });
    await esperarAte(() => interrompidas().length === 1, 'the failure logged');
    const [campos] = interrompidas()[0].args as [Record<string, any>];
    expect(campos.err.code).toBe('EIO');
    expect(campos.request_id).toEqual(expect.any(String));
  });

  test('a client that leaves mid-answer is not logged as a failure', async () => {
    mockRegistros.splice(0);
    await recebido('/fluxo/lento', (req) => req.destroy());
    // the server's side of it: the pipeline failing as the connection closes, handed to the error handler
    await new Promise((r) => setTimeout(r, 200));
    expect(interrompidas()).toEqual([]);
  });
});

describe('a dependency out of reach answers 503, not 500 (DESIGN §8)', () => {
  test.each(['/banco-sem-socket', '/sequelize-sem-socket', '/conexao-perdida', '/host-desconhecido'])('the database out of reach: a socket not there, a connection lost, a host not found (%s)', async (caminho) => {
    const res = await api.get(caminho, { headers: { 'x-request-id': 'req-sem-banco' } });
    expect(esperarProblema(res, 503)).toMatchObject({ type: expect.stringContaining('indisponivel'), request_id: 'req-sem-banco' });
    expect(res.text).not.toContain(SOCKET_AUSENTE);
  });

  test('a lock the database waited for past its limit: 503 (busy, try again), not 500', async () => {
    const res = await api.get('/trava-esgotada');
    esperarProblema(res, 503);
    expect(res.headers.get('retry-after')).toBe('5');
  });

  test('a 503 for a request that must not be sent again carries no Retry-After', async () => {
    const res = await api.get('/nao-repita');
    esperarProblema(res, 503);
    expect(res.headers.get('retry-after')).toBeNull();
  });

  test('a missing file is no dependency out of reach: 500', async () => {
    esperarProblema(await api.get('/arquivo-ausente'), 500);
  });
});

describe('health routes (DESIGN §4)', () => {
  test('/saude is always 200; /pronto is 503 while a dependency is down', async () => {
    expect((await api.get('/saude')).status).toBe(200);
    expect((await api.get('/pronto')).status).toBe(200);
    prontoFalha = true;
    // a 503 is the service's failure: it carries the id to quote, as a 500 does
    mockRegistros.splice(0);
    const fora = await api.get('/pronto', { headers: { 'x-request-id': 'req-pronto-1' } });
    expect(esperarProblema(fora, 503).request_id).toBe('req-pronto-1');
    // the answer names no part; the log says which failed, and why
    expect(fora.text).not.toContain('banco fora');
    expect(mockRegistros.filter((r) => r.args[1] === 'não está pronto').map((r) => r.args[0])).toEqual([expect.objectContaining({ erro: 'banco fora' })]);
    prontoFalha = false;
    expect((await api.get('/pronto')).status).toBe(200);
  });

  test('/pronto answers 503 within its deadline when a dependency stops answering, instead of hanging with it', async () => {
    prontoSemResposta = true;
    try {
      mockRegistros.splice(0);
      const inicio = Date.now();
      esperarProblema(await api.get('/pronto'), 503);
      expect(Date.now() - inicio).toBeGreaterThanOrEqual(PRAZO_DA_PRONTIDAO_MS - 50);
      expect(Date.now() - inicio).toBeLessThan(PRAZO_DA_PRONTIDAO_MS + 1500);
      expect(mockRegistros.filter((r) => r.args[1] === 'não está pronto').map((r) => r.args[0])).toEqual([expect.objectContaining({ erro: expect.stringMatching(/sem resposta/) })]);
    } finally {
      prontoSemResposta = false;
    }
  });
});
