import { createHash } from 'node:crypto';
import { carregarSegredo, urlAssinada, VALIDADE_DA_URL_SEGUNDOS } from '../../api/files/url-assinada';
import { config } from '../../config';
import { SegredoDeAssinatura } from '../../models/files';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { bytesAleatorios, filesDe } from './apoio';

/**
 * GET /arquivo/{id}/conteudo (DESIGN §7, SPEC §2 AnexoDaMensagem): downloads go through signed
 * URLs, valid 15 minutes, usable without a token; HMAC-SHA256 over the id and the expiry.
 */

let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
let app: { id: string; token: string };
let arquivo: any;
const BYTES = bytesAleatorios(5000);
const agora = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false });
  files = filesDe(suite);
  app = await files.novoAplicativo();
  arquivo = (await files.enviar(app.token, 'relatório "anual" 2026.pdf', BYTES, { tipo: 'application/pdf' })).body;
});
afterAll(() => suite.encerrar());

/** The url with one query parameter changed. */
function comParametro(url: string, nome: string, valor: string): string {
  const u = new URL(url);
  u.searchParams.set(nome, valor);
  return u.toString();
}

describe('the signed url (DESIGN §7, SPEC §2 AnexoDaMensagem: valid 15 minutes, no token)', () => {
  test('works without a token and streams the bytes with their type, length, an attachment name and no caching', async () => {
    const res = await files.baixar(arquivo.url);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(BYTES)).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-length')).toBe(String(BYTES.length));
    // a file deleted while its link is valid must not live on in a browser's cache
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // a file opened in the browser anyway (an HTML upload) runs no script and reaches nothing
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(res.headers.get('repr-digest')).toBe(`sha-256=:${createHash('sha256').update(BYTES).digest('base64')}:`);
    // RFC 6266: an ASCII fallback with no quote or non-ASCII, and the exact name in RFC 8187 encoding
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="relat_rio _anual_ 2026.pdf"; filename*=UTF-8''relat%C3%B3rio%20%22anual%22%202026.pdf`,
    );
  });

  test('a stored name that would disguise its extension (a right-to-left override) or hold a C1 control is saved under a plain one', async () => {
    // the sales copies carry names chosen by whoever sent the attachment
    const enviado = (await files.enviar(app.token, 'fatura\u202Efdp.exe', 'MZ')).body;
    expect(enviado.nome).toBe('fatura\u202Efdp.exe');
    const baixado = await files.baixar(enviado.url);
    expect(baixado.headers.get('content-disposition')).toBe(`attachment; filename="fatura_fdp.exe"; filename*=UTF-8''fatura_fdp.exe`);
    const comC1 = (await files.enviar(app.token, 'linha\u0085quebrada.txt', 'x')).body;
    expect((await files.baixar(comC1.url)).headers.get('content-disposition')).toBe(
      `attachment; filename="linha_quebrada.txt"; filename*=UTF-8''linha_quebrada.txt`,
    );
  });

  test('is valid 15 minutes: expira is now + 900 s in every answer that carries a url', async () => {
    expect(VALIDADE_DA_URL_SEGUNDOS).toBe(900);
    const lido = await files.api.get(`/arquivo/${arquivo.id}`, { token: app.token });
    const listado = await files.api.get('/arquivo', { token: app.token });
    for (const url of [arquivo.url, lido.body.url, listado.body.itens[0].url]) {
      const expira = Number(new URL(url).searchParams.get('expira'));
      expect(expira - agora()).toBeGreaterThan(VALIDADE_DA_URL_SEGUNDOS - 60);
      expect(expira - agora()).toBeLessThanOrEqual(VALIDADE_DA_URL_SEGUNDOS);
    }
  });

  test('signed with an expiry still ahead it works; with an expiry already past it is 403 problem+json', async () => {
    expect((await files.baixar(urlAssinada(arquivo.id, agora() + 5))).status).toBe(200);
    const expirada = await files.baixar(urlAssinada(arquivo.id, agora() - 1));
    esperarProblema(expirada, 403);
    expect(expirada.body.detail).toMatch(/expirado/);
    esperarProblema(await files.baixar(urlAssinada(arquivo.id, agora() - VALIDADE_DA_URL_SEGUNDOS - 1)), 403);
  });

  test('tampered: another signature, a later expiry under the old signature, or another file’s id are 403', async () => {
    const outro = (await files.enviar(app.token, 'outro.bin', 'outro')).body;
    const assinatura = new URL(arquivo.url).searchParams.get('assinatura')!;
    const trocada = assinatura.slice(0, -1) + (assinatura.endsWith('A') ? 'B' : 'A');
    const casos = [
      comParametro(arquivo.url, 'assinatura', trocada),
      comParametro(arquivo.url, 'assinatura', assinatura + 'A'),
      comParametro(arquivo.url, 'assinatura', assinatura.slice(1)),
      comParametro(arquivo.url, 'assinatura', assinatura + '='),
      comParametro(arquivo.url, 'assinatura', ''.padEnd(43, 'A')),
      comParametro(arquivo.url, 'expira', String(agora() + 86400)),
      arquivo.url.replace(arquivo.id, outro.id),
    ];
    for (const url of casos) {
      const res = await files.baixar(url);
      expect({ url, status: res.status }).toEqual({ url, status: 403 });
      expect(esperarProblema(res, 403).code).toBe('proibido');
    }
  });

  test('a url without its expiry or signature, with either written otherwise or twice, or with a malformed id, is refused as any link that does not hold: 403, not 400 (DESIGN §10)', async () => {
    const { searchParams } = new URL(arquivo.url);
    const [expira, assinatura] = [searchParams.get('expira'), searchParams.get('assinatura')];
    const base = `${suite.url.files}/arquivo/${arquivo.id}/conteudo`;
    const casos = [
      '',
      `?expira=${expira}`,
      `?assinatura=${assinatura}`,
      `?expira=amanha&assinatura=${assinatura}`,
      `?expira=${expira}.0&assinatura=${assinatura}`,
      `?expira=1.8e9&assinatura=${assinatura}`,
      `?expira=${expira}&expira=${expira}&assinatura=${assinatura}`,
      `?expira=${expira}&assinatura=${assinatura}&assinatura=${assinatura}`,
    ].map((query) => base + query);
    casos.push(`${suite.url.files}/arquivo/a%24b/conteudo?expira=${expira}&assinatura=${assinatura}`);
    for (const url of casos) {
      const res = await files.baixar(url);
      expect({ url, status: res.status }).toEqual({ url, status: 403 });
      expect(esperarProblema(res, 403).code).toBe('proibido');
    }
    // the id as the route takes it (in capitals), and the expiry with a leading zero, are the same link
    for (const url of [arquivo.url.replace(arquivo.id, arquivo.id.toUpperCase()), comParametro(arquivo.url, 'expira', `0${expira}`)]) {
      expect({ url, status: (await files.baixar(url)).status }).toEqual({ url, status: 200 });
    }
  });

  test('another application’s file is never readable through the API, yet its owner’s url works for whoever holds it', async () => {
    const intruso = await files.novoAplicativo();
    esperarProblema(await files.api.get(`/arquivo/${arquivo.id}`, { token: intruso.token }), 404);
    expect((await files.baixar(arquivo.url)).status).toBe(200);
  });

  test('HEAD of the url gives the headers and no body', async () => {
    const res = await files.baixar(arquivo.url, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(BYTES.length));
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.bytes.length).toBe(0);
  });
});

describe('the signing key (DESIGN §2: LOCALHOST secrets are generated on first start and kept)', () => {
  test('without FILES_SEGREDO_DE_ASSINATURA, LOCALHOST generated one key and keeps it in the service database', async () => {
    const guardados = await SegredoDeAssinatura.findAll();
    expect(guardados).toHaveLength(1);
    expect(guardados[0].valor.length).toBeGreaterThanOrEqual(43);
  });
});

describe('rotating the signing key (FILES_SEGREDOS_DE_VERIFICACAO: keys that check links and never sign)', () => {
  /** A process (re)started with these keys, as its environment would give them. */
  async function comChaves(assinatura: string | undefined, verificacao: string[]) {
    config().files.segredoDeAssinatura = assinatura;
    config().files.segredosDeVerificacao = verificacao;
    await carregarSegredo();
  }
  afterAll(() => comChaves(undefined, []));

  test('a link signed with either key works on every process while the rotation goes on; the old key is refused once it is dropped', async () => {
    const antiga = 'chave-antiga-'.padEnd(44, 'a');
    const nova = 'chave-nova-'.padEnd(44, 'n');
    const expira = agora() + 600;
    await comChaves(antiga, []);
    const daAntiga = urlAssinada(arquivo.id, expira);

    // processes already switched: sign with the new key, still check the old one
    await comChaves(nova, [antiga]);
    const daNova = urlAssinada(arquivo.id, expira);
    expect(daNova).not.toBe(daAntiga);
    expect((await files.baixar(daAntiga)).status).toBe(200);
    expect((await files.baixar(daNova)).status).toBe(200);

    // processes not yet switched: sign with the old key, already check the new one
    await comChaves(antiga, [nova]);
    expect((await files.baixar(daNova)).status).toBe(200);
    expect((await files.baixar(daAntiga)).status).toBe(200);

    // 15 minutes later, the old key dropped: its links are refused, the tampering checks stand
    await comChaves(nova, []);
    esperarProblema(await files.baixar(daAntiga), 403);
    expect((await files.baixar(daNova)).status).toBe(200);
    esperarProblema(await files.baixar(comParametro(daNova, 'expira', String(expira + 1))), 403);
  });
});

describe('readiness (DESIGN §4)', () => {
  test('GET /pronto answers 200 when the database, Redis and the storage folder are reachable', async () => {
    const res = await files.api.get('/pronto');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'pronto' });
  });
});
