import http from 'node:http';
import { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { RemocaoRecusada, removerArquivosDoAplicativoApagado } from '../../api/files/aplicativo-apagado';
import * as arquivos from '../../api/files/arquivos';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { Arquivo } from '../../models/files';
import { esperarAte } from '../helpers/espera';
import { ateOFim, comandoDaSuite, portaLivre } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { arquivosNoDisco, caminhoNoDisco, filesDe } from './apoio';

/**
 * `suite remove-app-files <aplicativo_id>` (docs/files.md, Operating it): the files of an
 * application deleted in identity go, rows and bytes, as each one's DELETE /arquivo/{id} removes
 * it; only identity's 404 for the application lets it start, asked with a master's token.
 */

let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
let master: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub', 'files'], { workers: false });
  files = filesDe(suite);
  master = await files.identity.admin();
});
afterAll(() => suite.encerrar());

/** An application of identity with `n` files of its own. */
async function aplicativoComArquivos(n: number) {
  const app = await files.novoAplicativo();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await files.enviar(app.token, `arquivo-${i}.txt`, `bytes ${i} de ${app.id}`);
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return { ...app, ids };
}

async function apagarNoIdentity(id: string) {
  expect((await files.identity.api.del(`/aplicativo/${id}`, { token: master })).status).toBe(204);
}

/** What is left of these files: rows, bytes on the disk and bytes owed a removal. */
async function restos(ids: string[]) {
  const linhas = await Arquivo.count({ where: { id: ids } });
  const disco = new Set(arquivosNoDisco());
  const devidos = await banco('files').query('SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id IN (?)', {
    replacements: [ids],
    type: QueryTypes.SELECT,
  });
  return { linhas, bytes: ids.filter((id) => disco.has(caminhoNoDisco(id))).length, devidos: devidos.length };
}

const inteiros = (ids: string[]) => ({ linhas: ids.length, bytes: ids.length, devidos: 0 });
const NADA = { linhas: 0, bytes: 0, devidos: 0 };

/** `suite remove-app-files <id>` as an operator runs it, on this file's databases and identity. */
function comando(id: string, env: Record<string, string> = {}) {
  return ateOFim(comandoDaSuite(['remove-app-files', id], { ...process.env, IDENTITY_URL: suite.url.identity, MASTER_TOKEN: master, ...env }));
}

describe('remove-app-files: identity must say the application is gone', () => {
  test('an application still in identity, active or deactivated, is refused and keeps every file', async () => {
    const app = await aplicativoComArquivos(2);
    await expect(removerArquivosDoAplicativoApagado(app.id, master)).rejects.toThrow(RemocaoRecusada);
    await expect(removerArquivosDoAplicativoApagado(app.id, master)).rejects.toThrow(/still exists in identity/);
    expect((await files.identity.api.patch(`/aplicativo/${app.id}`, { token: master, body: { ativo: false } })).status).toBe(200);
    await expect(removerArquivosDoAplicativoApagado(app.id, master)).rejects.toThrow(/still exists in identity/);
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
  });

  test('identity out of reach: refused, nothing removed; back in reach, the files go', async () => {
    const app = await aplicativoComArquivos(2);
    await apagarNoIdentity(app.id);
    const endereco = config().servicos.identity.url;
    config().servicos.identity.url = `http://127.0.0.1:${await portaLivre()}`;
    try {
      await expect(removerArquivosDoAplicativoApagado(app.id, master)).rejects.toThrow(
        new RemocaoRecusada(
          `identity did not confirm that application ${app.id} is deleted: its key set (${config().servicos.identity.url}/.well-known/jwks.json) could not be read (fetch failed (connect ECONNREFUSED ${new URL(config().servicos.identity.url).host})); nothing was removed`,
        ),
      );
    } finally {
      config().servicos.identity.url = endereco;
    }
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
    expect(await removerArquivosDoAplicativoApagado(app.id, master)).toBe(2);
  });

  test('an IDENTITY_URL naming a server that answers 404 to everything is not identity saying the application is gone: refused, nothing removed', async () => {
    const app = await aplicativoComArquivos(1);
    await apagarNoIdentity(app.id);
    const outro = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'));
    await new Promise<void>((r) => outro.listen(0, '127.0.0.1', r));
    const endereco = config().servicos.identity.url;
    config().servicos.identity.url = `http://127.0.0.1:${(outro.address() as AddressInfo).port}`;
    try {
      await expect(removerArquivosDoAplicativoApagado(app.id, master)).rejects.toThrow(/did not confirm .*: its key set \(.*\) could not be read \(Expected 200 OK .*\);/);
    } finally {
      config().servicos.identity.url = endereco;
      await new Promise((r) => outro.close(r));
    }
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
  });

  test("an IDENTITY_URL naming the hub, which takes identity's tokens and answers 404 for identity's ids, is not identity: refused, nothing removed", async () => {
    const app = await aplicativoComArquivos(1);
    await apagarNoIdentity(app.id);
    // what once passed for identity: the hub answers the listing as identity does, with the master's token
    const listagem = await fetch(`${suite.url.hub}/aplicativo?pagina=1&tamanho=1`, { headers: { authorization: `Bearer ${master}` } });
    expect(listagem.status).toBe(200);
    expect(Array.isArray(((await listagem.json()) as { itens?: unknown }).itens)).toBe(true);
    expect((await fetch(`${suite.url.hub}/aplicativo/${app.id}`, { headers: { authorization: `Bearer ${master}` } })).status).toBe(404);

    const recusado = await comando(app.id, { IDENTITY_URL: suite.url.hub });
    expect(recusado).toEqual({
      codigo: 1,
      saida: '',
      erros: expect.stringMatching(/^remove-app-files refused: .*: the token does not verify against the key set of http:\/\/.*; nothing was removed\n$/),
    });
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
  }, 60_000);

  test("a user who is not a master is refused, nothing removed", async () => {
    const app = await aplicativoComArquivos(1);
    await apagarNoIdentity(app.id);
    const { token } = await files.identity.criarUsuarioLogado();
    await expect(removerArquivosDoAplicativoApagado(app.id, token)).rejects.toThrow(new RemocaoRecusada("the token is of a user who is not a master: it takes a master's token. Nothing was removed"));
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
  });

  test("an application's token, which identity answers GET /aplicativo/{id} to, is refused: only a master decides, nothing removed", async () => {
    const app = await aplicativoComArquivos(1);
    await apagarNoIdentity(app.id);
    const servico = await files.novoAplicativo();
    expect((await files.identity.api.get(`/aplicativo/${app.id}`, { token: servico.token })).status).toBe(404);
    await expect(removerArquivosDoAplicativoApagado(app.id, servico.token)).rejects.toThrow(
      new RemocaoRecusada(`the token is application ${servico.id}'s: it takes a master's token. Nothing was removed`),
    );
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
  });
});

describe('remove-app-files: the files of an application deleted in identity', () => {
  test('every file goes, row and bytes, page by page with its progress; another application keeps its own; a second run finds nothing', async () => {
    const apagado = await aplicativoComArquivos(5);
    const outro = await aplicativoComArquivos(2);
    await apagarNoIdentity(apagado.id);
    const progresso: unknown[] = [];
    expect(await removerArquivosDoAplicativoApagado(apagado.id, master, (p) => progresso.push(p), 2)).toBe(5);
    expect(progresso).toEqual([
      { removidos: 2, total: 5 },
      { removidos: 4, total: 5 },
      { removidos: 5, total: 5 },
    ]);
    expect(await restos(apagado.ids)).toEqual(NADA);

    expect(await restos(outro.ids)).toEqual(inteiros(outro.ids));
    for (const id of outro.ids) {
      const lido = await files.api.get(`/arquivo/${id}`, { token: outro.token });
      expect((await files.baixar(lido.body.url)).bytes.toString()).toBe(`bytes ${outro.ids.indexOf(id)} de ${outro.id}`);
    }
    expect(await removerArquivosDoAplicativoApagado(apagado.id, master)).toBe(0);
  });

  test('stopped midway, every file is whole or gone, and the command run again removes the rest', async () => {
    const app = await aplicativoComArquivos(4);
    await apagarNoIdentity(app.id);
    const real = arquivos.deletarArquivo;
    let chamadas = 0;
    const deletar = jest.spyOn(arquivos, 'deletarArquivo').mockImplementation(async (aplicativoId, id) => {
      if (++chamadas === 3) throw new Error('conexão com o banco perdida');
      return real(aplicativoId, id);
    });
    try {
      await expect(removerArquivosDoAplicativoApagado(app.id, master)).rejects.toThrow('conexão com o banco perdida');
    } finally {
      deletar.mockRestore();
    }
    expect(await restos(app.ids.slice(0, 2))).toEqual(NADA);
    expect(await restos(app.ids.slice(2))).toEqual(inteiros(app.ids.slice(2)));
    expect(await removerArquivosDoAplicativoApagado(app.id, master)).toBe(2);
    expect(await restos(app.ids)).toEqual(NADA);
  });
});

describe('the command (suite remove-app-files)', () => {
  test('a signal while it still waits for the database stops it non-zero, nothing removed', async () => {
    const app = await aplicativoComArquivos(1);
    await apagarNoIdentity(app.id);
    const env = { ...process.env, IDENTITY_URL: suite.url.identity, MASTER_TOKEN: master, LOG_LEVEL: 'warn', MYSQL_URL: `mysql://root@127.0.0.1:${await portaLivre()}/` };
    const processo = comandoDaSuite(['remove-app-files', app.id], env);
    const fim = ateOFim(processo);
    let erros = '';
    processo.stderr.on('data', (d) => (erros += d));
    await esperarAte(() => erros.includes('aguardando'), 'the command waiting for the database', 20_000);
    processo.kill('SIGTERM');
    expect((await fim).codigo).toBe(1);
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));
  }, 60_000);

  test('exits 0 with the count once the files are removed; non-zero, saying why, when refused or without a token', async () => {
    const app = await aplicativoComArquivos(2);
    const recusado = await comando(app.id);
    expect(recusado).toEqual({ codigo: 1, saida: '', erros: expect.stringMatching(/^remove-app-files refused: application .* still exists in identity/) });
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));

    await apagarNoIdentity(app.id);
    const semToken = await comando(app.id, { MASTER_TOKEN: '' });
    expect(semToken).toEqual({ codigo: 1, saida: '', erros: expect.stringMatching(/^remove-app-files: set MASTER_TOKEN/) });
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));

    const malFormado = await comando(`${app.id}/x`);
    expect(malFormado).toEqual({ codigo: 1, saida: '', erros: expect.stringMatching(/^remove-app-files: ".*" is no application id/) });
    expect(await restos(app.ids)).toEqual(inteiros(app.ids));

    // the id as an operator may paste it, in capitals with a space: the application's, as the routes take it
    const feito = await comando(` ${app.id.toUpperCase()}`);
    expect(feito).toEqual({ codigo: 0, saida: `${JSON.stringify({ aplicativo_id: app.id, removidos: 2 })}\n`, erros: 'remove-app-files: 2 of 2 removed\n' });
    expect(await restos(app.ids)).toEqual(NADA);
  }, 90_000);
});
