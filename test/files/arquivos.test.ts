import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Readable } from 'node:stream';
import { DatabaseError, Op, QueryTypes } from 'sequelize';
import { arquivosPelaChave } from '../../api/files/arquivos';
import { banco, novaConexao } from '../../lib/database';
import { Arquivo } from '../../models/files';
import { esperarAte, esperarTravaEsperada } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { arquivosNoDisco, bytesAleatorios, caminhoNoDisco, filesDe, linhasNoBanco } from './apoio';

/**
 * The file storage service's /arquivo routes (DESIGN §7): an application uploads, lists, reads
 * and deletes its own files. The size limit is set to 2 MiB here (FILES_TAMANHO_MAXIMO_MB).
 */

const LIMITE = 2 * 1024 * 1024;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
let app: { id: string; token: string };

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false, env: { FILES_TAMANHO_MAXIMO_MB: '2' } });
  files = filesDe(suite);
  app = await files.novoAplicativo();
});
afterAll(() => suite.encerrar());

/** What the service keeps, before and after a call that must keep nothing. */
async function retrato() {
  return { disco: arquivosNoDisco(), linhas: await linhasNoBanco() };
}

/** A text upload sent with an Idempotency-Key. */
const comChave = (chave: string) => ({ tipo: 'text/plain', headers: { 'idempotency-key': chave } });

describe('POST /arquivo (DESIGN §7: an application uploads its own files)', () => {
  test('stores the raw body and answers 201 with id, nome, tipo_mime, tamanho, sha256, criado_em and an absolute signed url', async () => {
    const bytes = Buffer.from('olá, arquivo\n');
    const res = await files.enviar(app.token, 'nota.txt', bytes, { tipo: 'text/plain; charset=utf-8' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      nome: 'nota.txt',
      tipo_mime: 'text/plain; charset=utf-8',
      tamanho: bytes.length,
      sha256: sha256(bytes),
      criado_em: expect.stringMatching(RFC3339),
      url: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/arquivo/${res.body.id}`);
    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${suite.url.files}/arquivo/${res.body.id}/conteudo`);
    expect(url.searchParams.get('assinatura')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(res.body.id));
  });

  test('a JSON file sent as application/json is stored byte for byte: the JSON parser never touches an upload', async () => {
    const json = '{ "b" : [1, 2.50],\r\n\t"a":"\\u00e9" }\n\n';
    const res = await files.enviar(app.token, 'dados.json', json, { tipo: 'application/json' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(expect.objectContaining({ tipo_mime: 'application/json', tamanho: Buffer.byteLength(json), sha256: sha256(json) }));
    const baixado = await files.baixar(res.body.url);
    expect(baixado.status).toBe(200);
    expect(baixado.bytes.toString('utf8')).toBe(json);
    expect(baixado.headers.get('content-type')).toBe('application/json');

    // past the 1 MB limit of the services' JSON bodies: that limit is not the upload's
    const grande = `[${Array.from({ length: 200_000 }, (_, i) => i).join(',')}]`;
    expect(Buffer.byteLength(grande)).toBeGreaterThan(1024 * 1024);
    const enviadoGrande = await files.enviar(app.token, 'grande.json', grande, { tipo: 'application/json' });
    expect(enviadoGrande.status).toBe(201);
    expect(enviadoGrande.body.sha256).toBe(sha256(grande));

    // not even valid JSON: still just bytes
    const invalido = await files.enviar(app.token, 'quebrado.json', '{"a":', { tipo: 'application/json' });
    expect(invalido.status).toBe(201);
    expect((await files.baixar(invalido.body.url)).bytes.toString()).toBe('{"a":');
  });

  test('a binary file (every byte value, 600 KiB) round-trips exactly; tamanho and sha256 are those of the bytes', async () => {
    const todos = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const bytes = Buffer.concat([todos, bytesAleatorios(600 * 1024), todos]);
    const res = await files.enviar(app.token, 'imagem.bin', bytes, { tipo: 'image/png' });
    expect(res.status).toBe(201);
    expect(res.body.tamanho).toBe(bytes.length);
    expect(res.body.sha256).toBe(sha256(bytes));
    const baixado = await files.baixar(res.body.url);
    expect(baixado.status).toBe(200);
    expect(baixado.bytes.equals(bytes)).toBe(true);
  });

  test('a body sent in chunks with no Content-Length is streamed, measured and stored the same way', async () => {
    const pedacos = [bytesAleatorios(100_000), bytesAleatorios(1), bytesAleatorios(200_000)];
    const todos = Buffer.concat(pedacos);
    const res = await files.enviarEmPedacos(app.token, 'pedacos.bin', pedacos);
    expect(res.status).toBe(201);
    expect(res.body).toEqual(expect.objectContaining({ tamanho: todos.length, sha256: sha256(todos) }));
    expect((await files.baixar(res.body.url)).bytes.equals(todos)).toBe(true);
  });

  test('without Content-Type the file is application/octet-stream; a type is kept with type/subtype in lower case', async () => {
    const sem = await files.enviar(app.token, 'sem-tipo', 'x');
    expect(sem.status).toBe(201);
    expect(sem.body.tipo_mime).toBe('application/octet-stream');
    const misto = await files.enviar(app.token, 'misto.csv', 'a;b', { tipo: 'Text/CSV; charset=ISO-8859-1' });
    expect(misto.body.tipo_mime).toBe('text/csv; charset=ISO-8859-1');
  });

  test('an empty body is a file of 0 bytes (sha256 of nothing)', async () => {
    const res = await files.enviar(app.token, 'vazio.txt', Buffer.alloc(0), { tipo: 'text/plain' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(expect.objectContaining({ tamanho: 0, sha256: sha256('') }));
    const baixado = await files.baixar(res.body.url);
    expect(baixado.status).toBe(200);
    expect(baixado.bytes.length).toBe(0);
  });
});

describe('size limit FILES_TAMANHO_MAXIMO_MB, here 2 (DESIGN §4: file storage sets its own limit): 413 problem+json and nothing stored', () => {
  test('a file of exactly the limit is accepted', async () => {
    const res = await files.enviar(app.token, 'no-limite.bin', bytesAleatorios(LIMITE));
    expect(res.status).toBe(201);
    expect(res.body.tamanho).toBe(LIMITE);
  });

  test('one byte past the limit with a declared Content-Length: 413 before a byte is stored', async () => {
    const antes = await retrato();
    const res = await files.enviar(app.token, 'grande.bin', bytesAleatorios(LIMITE + 1));
    esperarProblema(res, 413);
    expect(res.body.code).toBe('corpo_grande_demais');
    expect(await retrato()).toEqual(antes);
  });

  test('one byte past the limit in chunks (size unknown until streamed): 413, the partial file removed, no row', async () => {
    const antes = await retrato();
    const res = await files.enviarEmPedacos(app.token, 'grande.bin', [bytesAleatorios(LIMITE - 10), bytesAleatorios(11)]);
    esperarProblema(res, 413);
    expect(res.headers.get('connection')).toBe('close');
    expect(await retrato()).toEqual(antes);
  });

  test('far past the limit, in many chunks: 413 and nothing left on disk or in the database', async () => {
    const antes = await retrato();
    const pedacos = Array.from({ length: 80 }, () => bytesAleatorios(64 * 1024));
    const res = await files.enviarEmPedacos(app.token, 'enorme.bin', pedacos);
    esperarProblema(res, 413);
    expect(await retrato()).toEqual(antes);
  });

  test('a client still sending when the 413 comes reads it, not a reset: the connection closes in stages (RFC 9112 §9.6)', async () => {
    // a body coming as from a slow source (the sales copy streams its download): with the socket
    // destroyed right after the answer, fetch met the reset before reading it and failed
    const devagar = () =>
      Readable.toWeb(
        Readable.from(
          (async function* () {
            for (let i = 0; i < 3 * 64; i++) {
              await new Promise((r) => setTimeout(r, 1));
              yield bytesAleatorios(16 * 1024);
            }
          })(),
        ),
      ) as ReadableStream;
    const antes = await retrato();
    for (let i = 0; i < 6; i++) {
      // chunked, refused once past the limit; then declared, refused before a byte is read
      const declarado = i % 2 === 1;
      const res = await fetch(`${suite.url.files}/arquivo?nome=devagar.bin`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/octet-stream', ...(declarado && { 'content-length': String(3 * LIMITE / 2) }) },
        body: devagar(),
        duplex: 'half',
      } as RequestInit);
      expect({ declarado, status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({ declarado, status: 413, code: 'corpo_grande_demais' });
    }
    expect(await retrato()).toEqual(antes);
  });

  test('a client that goes on sending after the answer still has its connection closed within seconds, the rest of its body not taken', async () => {
    const url = new URL(suite.url.files);
    // half-open: the server's end of its side does not end ours, as a client busy sending
    const socket = net.connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
    await once(socket, 'connect');
    socket.on('error', () => undefined);
    socket.write(
      `POST /arquivo?nome=sem-fim.bin HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${app.token}\r\n` +
        `Content-Type: application/octet-stream\r\nContent-Length: ${100 * LIMITE}\r\n\r\n`,
    );
    let resposta = '';
    socket.on('data', (d) => (resposta += d));
    const inicio = Date.now();
    const envio = setInterval(() => socket.writable && socket.write(bytesAleatorios(64 * 1024)), 5);
    try {
      // closed by a reset, as a rule: the client's bytes still in flight
      await new Promise((r) => socket.on('close', r));
    } finally {
      clearInterval(envio);
    }
    expect(resposta.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(Date.now() - inicio).toBeLessThan(4000);
  });
});

describe('an upload the client abandons midway leaves nothing (DESIGN §7: stream to storage, nothing half-stored)', () => {
  test('the partial file is removed, no row is written, and the service goes on serving', async () => {
    const antes = await retrato();
    // midway, the bytes received so far sit in a partial file (one: nothing else is being sent)
    await files.enviarEInterromper(app.token, 'interrompido.bin', bytesAleatorios(300_000), () =>
      esperarAte(() => arquivosNoDisco().filter((p) => p.startsWith('parciais')).length === 1, 'the partial file'),
    );
    // the server learns of the drop asynchronously: wait for its clean-up
    for (let i = 0; i < 50 && JSON.stringify(await retrato()) !== JSON.stringify(antes); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await retrato()).toEqual(antes);
    expect((await files.enviar(app.token, 'depois.txt', 'ok')).status).toBe(201);
  });
});

describe('Idempotency-Key: an upload sent again after a lost answer gets the first file, not a second copy', () => {

  test('the same key, bytes, name and type answer the first file (Idempotent-Replayed), and only one is kept', async () => {
    const chave = `copia-${Date.now()}`;
    const primeiro = await files.enviar(app.token, 'recibo.txt', 'recibo 1', comChave(chave));
    expect(primeiro.status).toBe(201);
    expect(primeiro.headers.get('idempotent-replayed')).toBeNull();
    const antes = await retrato();
    // bare or as a structured-field string, the same key
    const repetido = await files.enviar(app.token, 'recibo.txt', 'recibo 1', comChave(`"${chave}"`));
    expect(repetido.status).toBe(201);
    expect(repetido.headers.get('idempotent-replayed')).toBe('true');
    expect(repetido.body).toMatchObject({ id: primeiro.body.id, sha256: primeiro.body.sha256, nome: 'recibo.txt' });
    expect(repetido.headers.get('location')).toBe(`/arquivo/${primeiro.body.id}`);
    expect(await retrato()).toEqual(antes);
  });

  test('the same key with other bytes, name or type is 422 naming Idempotency-Key, and nothing is stored', async () => {
    const chave = `outra-${Date.now()}`;
    await files.enviar(app.token, 'a.txt', 'conteúdo', comChave(chave));
    const antes = await retrato();
    for (const [nome, bytes, tipo] of [
      ['a.txt', 'conteúdo diferente', 'text/plain'],
      ['b.txt', 'conteúdo', 'text/plain'],
      ['a.txt', 'conteúdo', 'text/csv'],
    ]) {
      const res = await files.enviar(app.token, nome, bytes, { tipo, headers: { 'idempotency-key': chave } });
      expect(esperarProblema(res, 422)).toMatchObject({ code: 'idempotency_key_reusada', title: 'Idempotency-Key já usada' });
      expect(res.body.errors).toEqual([expect.objectContaining({ campo: 'Idempotency-Key' })]);
    }
    expect(await retrato()).toEqual(antes);
  });

  test('a repeat whose Content-Type says the same in another spelling (case, spaces, quotes, a charset in capitals) is the same upload; another parameter value is not', async () => {
    const chave = `grafia-${Date.now()}`;
    const enviar = (tipo: string) => files.enviar(app.token, 'nota.txt', 'nota', { tipo, headers: { 'idempotency-key': chave } });
    const primeiro = await enviar('text/plain; charset=utf-8; format=flowed');
    expect(primeiro.status).toBe(201);
    const antes = await retrato();
    for (const tipo of ['Text/Plain;charset=UTF-8;format=flowed', 'text/plain ; CHARSET="utf-8"; Format="flowed"']) {
      const res = await enviar(tipo);
      expect(res.status).toBe(201);
      expect(res.headers.get('idempotent-replayed')).toBe('true');
      expect(res.body).toMatchObject({ id: primeiro.body.id, tipo_mime: 'text/plain; charset=utf-8; format=flowed' });
    }
    for (const tipo of ['text/plain; charset=utf-8; format=Flowed', 'text/plain; charset=utf-8', 'text/plain; charset=latin1; format=flowed']) {
      esperarProblema(await enviar(tipo), 422);
    }
    expect(await retrato()).toEqual(antes);
  });

  test('keys are per application, and a key is free again once its file is deleted', async () => {
    const chave = `por-app-${Date.now()}`;
    const outro = await files.novoAplicativo();
    const meu = await files.enviar(app.token, 'x.txt', 'x', comChave(chave));
    const dele = await files.enviar(outro.token, 'x.txt', 'x', comChave(chave));
    expect(dele.status).toBe(201);
    expect(dele.headers.get('idempotent-replayed')).toBeNull();
    expect(dele.body.id).not.toBe(meu.body.id);
    expect((await files.api.del(`/arquivo/${meu.body.id}`, { token: app.token })).status).toBe(204);
    const denovo = await files.enviar(app.token, 'x.txt', 'x', comChave(chave));
    expect(denovo.status).toBe(201);
    expect(denovo.body.id).not.toBe(meu.body.id);
  });

  test('a key whose file is deleted between the upload meeting it and reading it back is taken by that upload, as a fresh one', async () => {
    const chave = `apagado-no-meio-${Date.now()}`;
    const primeiro = await files.enviar(app.token, 'y.txt', 'y', comChave(chave));
    expect(primeiro.status).toBe(201);
    // the first file goes away right after the second upload's insert met its key, before the re-read
    const findOne = Arquivo.findOne.bind(Arquivo);
    const espiao = jest.spyOn(Arquivo, 'findOne').mockImplementation((async (opcoes: any) => {
      // the read of the key's file (its condition on the generated column, arquivos.ts pelaChave)
      if ((opcoes?.where?.[Op.and] as { logic?: unknown }[] | undefined)?.some((w) => w?.logic === chave)) {
        espiao.mockRestore();
        expect((await files.api.del(`/arquivo/${primeiro.body.id}`, { token: app.token })).status).toBe(204);
      }
      return findOne(opcoes);
    }) as any);
    try {
      const denovo = await files.enviar(app.token, 'y.txt', 'y', comChave(chave));
      expect(denovo.status).toBe(201);
      expect(denovo.headers.get('idempotent-replayed')).toBeNull();
      expect(denovo.body.id).not.toBe(primeiro.body.id);
      expect(arquivosNoDisco()).toContain(caminhoNoDisco(denovo.body.id));
      expect((await files.baixar(denovo.body.url)).bytes.toString()).toBe('y');
      expect(await Arquivo.count({ where: { aplicativo_id: app.id, chave_de_idempotencia: chave } })).toBe(1);
    } finally {
      espiao.mockRestore();
    }
  });

  test('two uploads with one key at the same moment keep one file; both answer it', async () => {
    const chave = `juntos-${Date.now()}`;
    const antes = (await retrato()).linhas;
    const bytes = bytesAleatorios(200_000);
    const [a, b] = await Promise.all([1, 2].map(() => files.enviar(app.token, 'par.bin', bytes, { headers: { 'idempotency-key': chave } })));
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).toBe(b.body.id);
    expect((await retrato()).linhas).toBe(antes + 1);
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(a.body.id));
  });

  test('an upload whose insert the database rolls back for a deadlock (uploads of one key meeting its deletion) is written again', async () => {
    const chave = `impasse-${Date.now()}`;
    const espiao = jest.spyOn(Arquivo, 'create').mockImplementationOnce((async () => {
      const erro = Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { code: 'ER_LOCK_DEADLOCK', errno: 1213, sql: 'INSERT INTO arquivo' });
      throw new DatabaseError(erro as never);
    }) as any);
    try {
      const antes = await retrato();
      const res = await files.enviar(app.token, 'impasse.txt', 'impasse', comChave(chave));
      expect(espiao).toHaveBeenCalledTimes(2);
      expect(res.status).toBe(201);
      expect((await files.baixar(res.body.url)).bytes.toString()).toBe('impasse');
      expect((await retrato()).linhas).toBe(antes.linhas + 1);
      const [devidos] = await banco('files').query('SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id = ?', { replacements: [res.body.id] });
      expect(devidos).toEqual([]);
    } finally {
      espiao.mockRestore();
    }
  });

  test('uploads with one key while its file is being deleted: once the delete commits, they keep one new file; all answer it', async () => {
    const chave = `apagando-${Date.now()}`;
    const primeiro = await files.enviar(app.token, 'z.bin', 'z', comChave(chave));
    expect(primeiro.status).toBe(201);
    // the deletion's transaction, its row already gone, not yet committed: the uploads' inserts wait on the key
    const sequelize = banco('files');
    const apagando = await sequelize.transaction();
    // watched on a connection of its own: the deletion and the four uploads hold every connection
    // of the service's Sequelize pool (DB_CONEXOES_POR_POOL, 5) until the commit
    const observador = await novaConexao('files');
    try {
      // as deletarArquivo deletes a file (the model's logical deletion)
      await Arquivo.destroy({ where: { id: primeiro.body.id }, transaction: apagando });
      const envios = [1, 2, 3, 4].map(() => files.enviar(app.token, 'z.bin', 'z', comChave(chave)));
      await esperarTravaEsperada(observador, 'the four uploads waiting on the deletion of their key', 4);
      await apagando.commit();
      const respostas = await Promise.all(envios);
      expect(respostas.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      expect(new Set(respostas.map((r) => r.body.id)).size).toBe(1);
      expect(respostas[0].body.id).not.toBe(primeiro.body.id);
      expect(respostas.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
      expect(await Arquivo.count({ where: { aplicativo_id: app.id, chave_de_idempotencia: chave } })).toBe(1);
    } finally {
      await apagando.rollback().catch(() => undefined);
      await observador.end();
    }
  });

  test('a key that is empty, longer than 255 or not visible ASCII is 400 naming Idempotency-Key, and nothing is stored', async () => {
    const antes = await retrato();
    for (const chave of ['', '""', 'x'.repeat(256), 'com espaço', 'ação']) {
      const res = await files.enviar(app.token, 'k.txt', 'k', { headers: { 'idempotency-key': chave } });
      esperarProblema(res, 400);
      expect(res.body.errors).toEqual([expect.objectContaining({ campo: 'Idempotency-Key' })]);
    }
    expect(await retrato()).toEqual(antes);
  });
});

describe('GET /arquivo (DESIGN §7 lists its own files; DESIGN §4 page-number paging): most recent first', () => {
  test('pagina/tamanho page the list; total counts every file of the caller and no other', async () => {
    const dono = await files.novoAplicativo();
    const outro = await files.novoAplicativo();
    const ids: string[] = [];
    for (const nome of ['um', 'dois', 'tres']) ids.push((await files.enviar(dono.token, nome, nome)).body.id);
    await files.enviar(outro.token, 'alheio', 'x');

    const p1 = await files.api.get('/arquivo', { token: dono.token, query: { tamanho: 2 } });
    expect(p1.status).toBe(200);
    expect(p1.body).toEqual({ itens: expect.any(Array), pagina: 1, tamanho: 2, total: 3 });
    expect(p1.body.itens.map((a: any) => a.nome)).toEqual(['tres', 'dois']);
    expect(p1.body.itens[0]).toEqual(expect.objectContaining({ id: ids[2], tamanho: 4, url: expect.stringContaining(`/arquivo/${ids[2]}/conteudo?`) }));
    const p2 = await files.api.get('/arquivo', { token: dono.token, query: { pagina: 2, tamanho: 2 } });
    expect(p2.body.itens.map((a: any) => a.id)).toEqual([ids[0]]);

    // DESIGN §4: below 1 becomes 1, the cap applies, non-integers are refused
    const ajustada = await files.api.get('/arquivo', { token: dono.token, query: { pagina: 0, tamanho: 1000 } });
    expect(ajustada.body).toEqual(expect.objectContaining({ pagina: 1, tamanho: 100, total: 3 }));
    expect(ajustada.body.itens.map((a: any) => a.id)).toEqual([ids[2], ids[1], ids[0]]);
    esperarProblema(await files.api.get('/arquivo', { token: dono.token, query: { tamanho: 'dez' } }), 400);
  });

  test('a page holds at most 100 files, whatever tamanho asks', async () => {
    const dono = await files.novoAplicativo();
    for (let i = 0; i < 101; i++) await files.enviar(dono.token, `f${i}`, 'x');
    const res = await files.api.get('/arquivo', { token: dono.token, query: { tamanho: 500 } });
    expect(res.body).toEqual({ itens: expect.any(Array), pagina: 1, tamanho: 100, total: 101 });
    expect(res.body.itens).toHaveLength(100);
    expect((await files.api.get('/arquivo', { token: dono.token, query: { tamanho: 500, pagina: 2 } })).body.itens).toHaveLength(1);
  });

  test('an application with no files gets an empty page', async () => {
    const novo = await files.novoAplicativo();
    const res = await files.api.get('/arquivo', { token: novo.token });
    expect(res.body).toEqual({ itens: [], pagina: 1, tamanho: 10, total: 0 });
  });
});

describe('GET /arquivo/{id} and DELETE /arquivo/{id} (DESIGN §7: reads and deletes its own files)', () => {
  test('GET gives the metadata and a fresh signed url', async () => {
    const enviado = (await files.enviar(app.token, 'ler.txt', 'conteúdo', { tipo: 'text/plain' })).body;
    // a second later: the url read is signed anew, valid 15 minutes from the read
    await new Promise((r) => setTimeout(r, 1100));
    const res = await files.api.get(`/arquivo/${enviado.id}`, { token: app.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...enviado, url: expect.any(String) });
    const expira = (url: string) => Number(new URL(url).searchParams.get('expira'));
    expect(expira(res.body.url)).toBeGreaterThan(expira(enviado.url));
    expect((await files.baixar(res.body.url)).bytes.toString()).toBe('conteúdo');
  });

  test('DELETE answers 204, removes the bytes and keeps the row marked deleted (DESIGN §4); afterwards the file is 404 everywhere, the old url included, and gone from the listing', async () => {
    const chave = `apagar-${Date.now()}`;
    const enviado = (await files.enviar(app.token, 'apagar.txt', 'tchau', comChave(chave))).body;
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(enviado.id));
    const res = await files.api.del(`/arquivo/${enviado.id}`, { token: app.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(enviado.id));
    // the record stays, marked, with its key (a new upload may take the key: it is unique among live files)
    const [linha] = await banco('files').query('SELECT nome, sha256, deletado_em, chave_de_idempotencia FROM arquivo WHERE id = ?', {
      replacements: [enviado.id],
      type: QueryTypes.SELECT,
    });
    expect(linha).toEqual({ nome: 'apagar.txt', sha256: enviado.sha256, deletado_em: expect.any(Date), chave_de_idempotencia: chave });
    const listados = (await files.api.get('/arquivo', { token: app.token, query: { tamanho: 1000 } })).body;
    expect(listados.itens.map((a: any) => a.id)).not.toContain(enviado.id);
    expect(listados.total).toBe(await Arquivo.count({ where: { aplicativo_id: app.id } }));
    expect((await files.api.get('/arquivo/filtro', { token: app.token, query: { ids: enviado.id } })).body).toEqual([]);
    expect((await files.api.get('/arquivo/filtro', { token: app.token, query: { chave } })).body).toEqual([]);
    esperarProblema(await files.api.get(`/arquivo/${enviado.id}`, { token: app.token }), 404);
    esperarProblema(await files.api.del(`/arquivo/${enviado.id}`, { token: app.token }), 404);
    const baixado = await files.baixar(enviado.url);
    expect(baixado.status).toBe(404);
  });

  test('an unknown id is 404 problem+json', async () => {
    esperarProblema(await files.api.get('/arquivo/0190f000-0000-7000-8000-000000000000', { token: app.token }), 404);
    esperarProblema(await files.api.del('/arquivo/0190f000-0000-7000-8000-000000000000', { token: app.token }), 404);
  });
});

describe('GET /arquivo/filtro?ids= (many signed URLs in one call, for the sales attachments)', () => {
  test('answers the caller\'s files among the ids, in the order asked, each with a fresh url; others\' and unknown ids are left out', async () => {
    const a = (await files.enviar(app.token, 'a.txt', 'a')).body;
    const b = (await files.enviar(app.token, 'b.txt', 'b')).body;
    const outro = await files.novoAplicativo();
    const alheio = (await files.enviar(outro.token, 'c.txt', 'c')).body;
    const ids = [b.id, alheio.id, '019a0000-0000-7000-8000-000000000000', a.id, b.id].join(',');
    const res = await files.api.get('/arquivo/filtro', { token: app.token, query: { ids } });
    expect(res.status).toBe(200);
    expect(res.body.map((f: any) => f.id)).toEqual([b.id, a.id]);
    expect(res.body[0]).toEqual({ ...b, url: expect.any(String) });
    expect((await files.baixar(res.body[1].url)).text).toBe('a');
    // ids are taken in lower case, as by GET /arquivo/{id}
    const maiusculas = await files.api.get('/arquivo/filtro', { token: app.token, query: { ids: a.id.toUpperCase() } });
    expect(maiusculas.body.map((f: any) => f.id)).toEqual([a.id]);
  });

  test('no ids, more than 100, or a malformed one answers 400; a user token 403', async () => {
    esperarProblema(await files.api.get('/arquivo/filtro', { token: app.token }), 400);
    esperarProblema(await files.api.get('/arquivo/filtro', { token: app.token, query: { ids: ',' } }), 400);
    const muitos = Array.from({ length: 101 }, (_, i) => `id${i}`).join(',');
    esperarProblema(await files.api.get('/arquivo/filtro', { token: app.token, query: { ids: muitos } }), 400);
    esperarProblema(await files.api.get('/arquivo/filtro', { token: app.token, query: { ids: 'a b' } }), 400);
    esperarProblema(await files.api.get('/arquivo/filtro', { token: await files.identity.admin(), query: { ids: 'abc' } }), 403);
  });
});

describe('GET /arquivo/filtro?chave= (an upload whose answer was lost, found by its Idempotency-Key)', () => {
  test("answers the caller's file uploaded with that key, with a fresh url; an unknown key, another application's file with the same key, or a deleted file's key answer an empty list", async () => {
    // every kind of visible ASCII a key may hold, those a query string must encode included
    const chave = `perdida+/?&=%,"#-${Date.now()}`;
    const enviado = await files.enviar(app.token, 'perdido.txt', 'perdido', comChave(chave));
    expect(enviado.status).toBe(201);
    const outro = await files.novoAplicativo();
    const alheio = await files.enviar(outro.token, 'perdido.txt', 'perdido', comChave(chave));
    expect(alheio.status).toBe(201);
    const achado = await files.api.get('/arquivo/filtro', { token: app.token, query: { chave } });
    expect(achado.status).toBe(200);
    expect(achado.body).toEqual([{ ...enviado.body, url: expect.any(String) }]);
    expect((await files.baixar(achado.body[0].url)).text).toBe('perdido');
    // the other application finds its own, never this one's
    expect((await files.api.get('/arquivo/filtro', { token: outro.token, query: { chave } })).body.map((f: any) => f.id)).toEqual([alheio.body.id]);
    // keys compare exactly
    expect((await files.api.get('/arquivo/filtro', { token: app.token, query: { chave: chave.toUpperCase() } })).body).toEqual([]);
    expect((await files.api.get('/arquivo/filtro', { token: app.token, query: { chave: `nunca-${Date.now()}` } })).body).toEqual([]);
    // sent as a structured-field string, the key is stored bare and found bare
    const aspas = `aspas-${Date.now()}`;
    const comAspas = await files.enviar(app.token, 'a.txt', 'a', { headers: { 'idempotency-key': `"${aspas}"` } });
    expect((await files.api.get('/arquivo/filtro', { token: app.token, query: { chave: aspas } })).body.map((f: any) => f.id)).toEqual([comAspas.body.id]);
    expect((await files.api.del(`/arquivo/${enviado.body.id}`, { token: app.token })).status).toBe(204);
    expect((await files.api.get('/arquivo/filtro', { token: app.token, query: { chave } })).body).toEqual([]);
  });

  test('neither ids nor chave, both, or a key that is empty, longer than 255 or not visible ASCII answers 400 naming what is wrong; a user token 403; nothing changes', async () => {
    const chave = `valida-${Date.now()}`;
    const enviado = await files.enviar(app.token, 'v.txt', 'v', { headers: { 'idempotency-key': chave } });
    const antes = await retrato();
    const campos = async (query: Record<string, string>) => {
      const res = await files.api.get('/arquivo/filtro', { token: app.token, query });
      esperarProblema(res, 400);
      return res.body.errors.map((e: { campo: string }) => e.campo);
    };
    expect(await campos({})).toEqual(['query']);
    expect(await campos({ ids: enviado.body.id, chave })).toEqual(['query']);
    for (const ruim of ['', 'x'.repeat(256), 'com espaço', 'acentuação']) expect(await campos({ chave: ruim })).toEqual(['chave']);
    esperarProblema(await files.api.get('/arquivo/filtro', { token: await files.identity.admin(), query: { chave } }), 403);
    expect(await retrato()).toEqual(antes);
    expect((await files.api.get(`/arquivo/${enviado.body.id}`, { token: app.token })).status).toBe(200);
  });
});

test("a file is found by its Idempotency-Key through the key's unique index (its generated column), not by reading the application's files", async () => {
  const chave = `indice-${Date.now()}`;
  const enviado = (await files.enviar(app.token, 'indice.txt', 'i', comChave(chave))).body;
  const sequelize = banco('files');
  const lidas: string[] = [];
  const antes = sequelize.options.logging;
  sequelize.options.logging = (sql: string) => void lidas.push(sql.replace(/^Executing \([^)]*\): /, ''));
  try {
    expect((await arquivosPelaChave(app.id, chave)).map((a) => a.id)).toEqual([enviado.id]);
  } finally {
    sequelize.options.logging = antes;
  }
  const leitura = lidas.find((sql) => sql.startsWith('SELECT') && sql.includes('chave_viva'));
  expect(leitura).toBeDefined();
  const [plano] = await sequelize.query<{ key: string }>(`EXPLAIN ${leitura}`, { type: QueryTypes.SELECT });
  expect(plano.key).toBe('arquivo_chave_viva');
});

describe('DESIGN §7 "its own files": another application’s file is 404 on every route (its existence never shown)', () => {
  test('GET and DELETE of another application’s file answer 404, as for an id that never existed, and its bytes stay', async () => {
    const dono = await files.novoAplicativo();
    const intruso = await files.novoAplicativo();
    const alheio = (await files.enviar(dono.token, 'segredo.txt', 'só do dono')).body;

    const lido = await files.api.get(`/arquivo/${alheio.id}`, { token: intruso.token });
    const inexistente = await files.api.get('/arquivo/0190f000-0000-7000-8000-000000000001', { token: intruso.token });
    esperarProblema(lido, 404);
    esperarProblema(inexistente, 404);
    expect(lido.body).toEqual(inexistente.body);
    esperarProblema(await files.api.del(`/arquivo/${alheio.id}`, { token: intruso.token }), 404);
    expect((await files.api.get('/arquivo', { token: intruso.token })).body.total).toBe(0);

    expect(arquivosNoDisco()).toContain(caminhoNoDisco(alheio.id));
    expect((await files.api.get(`/arquivo/${alheio.id}`, { token: dono.token })).status).toBe(200);
  });
});

describe('access (DESIGN §10 order: 401, then 403, then 400): application tokens only', () => {
  test('no token is 401 and a user token 403 on every /arquivo route, and an upload stores nothing', async () => {
    const enviado = (await files.enviar(app.token, 'acesso.txt', 'x')).body;
    const { token: usuario } = await files.identity.criarUsuarioLogado();
    const antes = await retrato();

    esperarProblema(await files.enviar(undefined, 'a.txt', 'x'), 401);
    esperarProblema(await files.enviar('nao.e.um.token', 'a.txt', 'x'), 401);
    esperarProblema(await files.enviar(usuario, 'a.txt', 'x'), 403);
    // authentication comes before validation: a bad request without a token is still 401
    esperarProblema(await files.enviar(undefined, undefined, 'x'), 401);
    for (const [metodo, caminho] of [
      ['get', '/arquivo'],
      ['get', `/arquivo/${enviado.id}`],
      ['del', `/arquivo/${enviado.id}`],
    ] as const) {
      const semToken = await files.api[metodo](caminho);
      esperarProblema(semToken, 401);
      expect(semToken.headers.get('www-authenticate')).toBe('Bearer');
      esperarProblema(await files.api[metodo](caminho, { token: usuario }), 403);
    }
    expect(await retrato()).toEqual(antes);
  });
});

describe('a refused upload does not hold its connection', () => {
  /** Sends the headers of an upload of 1,000 bytes and 10 of them; answers what the server sent and whether it closed. */
  async function envioPelaMetade(autorizacao?: string, caminho = '/arquivo') {
    const url = new URL(suite.url.files);
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    socket.write(
      `POST ${caminho}?nome=lento.bin HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/octet-stream\r\n` +
        `${autorizacao ? `Authorization: Bearer ${autorizacao}\r\n` : ''}Content-Length: 1000\r\n\r\n${'x'.repeat(10)}`,
    );
    let resposta = '';
    socket.on('data', (d) => (resposta += d));
    const fechou = await Promise.race([once(socket, 'end').then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
    socket.destroy();
    return { resposta, fechou };
  }

  test('without a token (401), with a user token (403) or to no route (404), the answer comes at once and the server closes the connection, not waiting for the rest of the body', async () => {
    const antes = await retrato();
    const { token: usuario } = await files.identity.criarUsuarioLogado();
    for (const [autorizacao, status] of [
      [undefined, 401],
      [usuario, 403],
    ] as const) {
      const { resposta, fechou } = await envioPelaMetade(autorizacao);
      expect(resposta.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}`);
      expect(resposta.toLowerCase()).toContain('connection: close');
      expect(fechou).toBe(true);
    }
    // and a body sent to no route at all
    const { resposta, fechou } = await envioPelaMetade(app.token, '/arquivos');
    expect(resposta.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(resposta.toLowerCase()).toContain('connection: close');
    expect(fechou).toBe(true);
    expect(await retrato()).toEqual(antes);
  });
});

describe('bad input (DESIGN §4, §10): 400 problem+json naming the field, and nothing stored', () => {
  test.each([
    ['missing nome', undefined],
    ['empty nome', ''],
    ['blank nome', '   '],
    ['nome over 255 characters', 'a'.repeat(256)],
    ['nome with a control character', 'linha\nquebrada.txt'],
    ['nome with a NUL', 'a\u0000b.txt'],
    // 255 characters that NFC turns into 510 (U+0958 is excluded from composition)
    ['nome over 255 characters once in NFC', '\u0958'.repeat(255)],
  ])('%s', async (_caso, nome) => {
    const antes = await retrato();
    const problema = esperarProblema(await files.enviar(app.token, nome, 'bytes'), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'nome' })]);
    expect(await retrato()).toEqual(antes);
  });

  test('a nome of exactly 255 characters (multi-byte ones too) is accepted', async () => {
    const nome = 'ç'.repeat(251) + '.txt';
    const res = await files.enviar(app.token, nome, 'x');
    expect(res.status).toBe(201);
    expect(res.body.nome).toBe(nome);
  });

  test('the length is counted in characters, not UTF-16 units: names of emoji up to 255 characters are stored whole, one more is 400 naming nome', async () => {
    // 130 emoji and `.png`: 134 characters in 264 UTF-16 units; then 255 characters in 506
    for (const nome of ['😀'.repeat(130) + '.png', '😀'.repeat(251) + '.png']) {
      const res = await files.enviar(app.token, nome, 'x');
      expect(res.status).toBe(201);
      expect(res.body.nome).toBe(nome);
      expect((await Arquivo.findByPk(res.body.id))?.nome).toBe(nome);
      expect((await files.baixar(res.body.url)).headers.get('content-disposition')).toContain(`filename*=UTF-8''${encodeURIComponent(nome)}`);
    }
    const antes = await retrato();
    const problema = esperarProblema(await files.enviar(app.token, '😀'.repeat(252) + '.png', 'x'), 400);
    expect(problema.errors).toEqual([{ campo: 'nome', mensagem: 'o nome passa de 255 caracteres' }]);
    expect(await retrato()).toEqual(antes);
  });

  test('the length is counted in NFC, the form the name is stored in: 300 decomposed characters that compose into 150 are accepted', async () => {
    const decomposto = 'c\u0327'.repeat(150);
    const res = await files.enviar(app.token, decomposto, 'x');
    expect(res.status).toBe(201);
    expect(res.body.nome).toBe('ç'.repeat(150));
  });

  test('a Content-Type that is not a media type is 400 naming Content-Type', async () => {
    const antes = await retrato();
    for (const tipo of ['texto', 'text/', 'a/b; charset', `a/${'b'.repeat(300)}`]) {
      const problema = esperarProblema(await files.enviar(app.token, 'x.bin', 'x', { tipo }), 400);
      expect(problema.errors).toEqual([expect.objectContaining({ campo: 'Content-Type' })]);
    }
    expect(await retrato()).toEqual(antes);
  });

  test('a compressed body (Content-Encoding) is refused with 415: the service stores bytes as sent; only once the caller may upload (DESIGN §10)', async () => {
    const antes = await retrato();
    const gzip = { headers: { 'content-encoding': 'gzip' } };
    expect(esperarProblema(await files.enviar(app.token, 'x.gz', 'x', gzip), 415).code).toBe('codificacao_nao_suportada');
    esperarProblema(await files.enviar('', 'x.gz', 'x', gzip), 401);
    const { token: usuario } = await files.identity.criarUsuarioLogado();
    esperarProblema(await files.enviar(usuario, 'x.gz', 'x', gzip), 403);
    expect(await retrato()).toEqual(antes);
  });

  test('a body in a transfer coding besides chunked (gzip, chunked: Node removes the chunks alone) is refused with 415 too, nothing stored', async () => {
    const antes = await retrato();
    const url = new URL(suite.url.files);
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    let resposta = '';
    socket.on('data', (d) => (resposta += d));
    socket.write(
      `POST /arquivo?nome=x.bin HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${app.token}\r\nContent-Type: application/octet-stream\r\n` +
        'Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    );
    await once(socket, 'close');
    expect(resposta).toMatch(/^HTTP\/1\.1 415 /);
    expect(resposta).toContain('"code":"codificacao_nao_suportada"');
    expect(await retrato()).toEqual(antes);
  });

  test('a malformed id is 400 on GET and DELETE; on the download, whose signature is its permission, 403 (DESIGN §10)', async () => {
    for (const id of ['a.b', 'x'.repeat(65), '..%2F..%2Fetc%2Fpasswd', '%00']) {
      esperarProblema(await files.api.get(`/arquivo/${id}`, { token: app.token }), 400);
      esperarProblema(await files.api.del(`/arquivo/${id}`, { token: app.token }), 400);
      esperarProblema(await files.api.get(`/arquivo/${id}/conteudo`, { query: { expira: 1, assinatura: 'x' } }), 403);
    }
  });
});

describe('path traversal in nome is harmless (DESIGN §7 storage by id): the bytes are stored under the id, the name is only a label', () => {
  test.each(['../../../../tmp/escapou.txt', '..\\..\\windows\\system32\\x.dll', '/etc/passwd', '..', 'a/../../b'])(
    '%s',
    async (nome) => {
      const bytes = bytesAleatorios(32);
      const res = await files.enviar(app.token, nome, bytes);
      expect(res.status).toBe(201);
      expect(res.body.nome).toBe(nome);
      expect(arquivosNoDisco()).toContain(caminhoNoDisco(res.body.id));
      expect(arquivosNoDisco().every((p) => !p.includes('..') && !p.includes('escapou') && !p.includes('passwd'))).toBe(true);
      const baixado = await files.baixar(res.body.url);
      expect(baixado.bytes.equals(bytes)).toBe(true);
      // the browser is told a plain file name: no separators
      const disposicao = baixado.headers.get('content-disposition')!;
      expect(disposicao).toMatch(/^attachment; filename="[^"/\\]*"; filename\*=UTF-8''[^/\\]*$/);
      expect(disposicao).not.toMatch(/%2F|%5C/i);
    },
  );
});
