import { open } from 'node:fs/promises';
import { existsSync, lutimesSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { abandonoDeParcialMs, ArmazenamentoLocal } from '../../api/files/armazenamento-local';
import { disposicaoDeAnexo } from '../../api/files/disposicao';

/** The local-disk storage behind the Armazenamento interface (DESIGN §7), on a folder of its own. */

// `open` watched (and run as it is): a folder's fsync opens it read-only
jest.mock('node:fs/promises', () => {
  const real = jest.requireActual('node:fs/promises');
  return { ...real, open: jest.fn(real.open) };
});

let dir: string;
let local: ArmazenamentoLocal;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'armazenamento-'));
  local = new ArmazenamentoLocal(dir);
  await local.preparar();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ler = async (r: Readable | null) => {
  const partes: Buffer[] = [];
  for await (const p of r!) partes.push(p as Buffer);
  return Buffer.concat(partes);
};

test('writes from a stream, reads as a stream, removes; a missing key reads as null and removes without error', async () => {
  const id = '0190f000-0000-7000-8000-0000000000ab';
  await local.gravar(id, Readable.from([Buffer.from('um '), Buffer.from('dois')]));
  expect(existsSync(path.join(dir, 'ab', id))).toBe(true);
  expect((await ler(await local.ler(id))).toString()).toBe('um dois');
  await local.remover(id);
  expect(await local.ler(id)).toBeNull();
  await expect(local.remover(id)).resolves.toBeUndefined();
});

test("a write's folder is synced once the file is renamed into it, and the storage folder too (the sub-folder's name, made for this file or for another a moment ago, is kept there)", async () => {
  const aberturas = jest.mocked(open);
  const sincronizadas = () => aberturas.mock.calls.filter((c) => c[1] === 'r').map((c) => path.relative(dir, String(c[0])) || '.');
  aberturas.mockClear();
  await local.gravar('0190f000-0000-7000-8000-0000000000cd', Readable.from([Buffer.from('primeiro')]));
  expect(sincronizadas()).toEqual(['cd', '.']);
  aberturas.mockClear();
  await local.gravar('0190f000-0000-7000-8000-0000000001cd', Readable.from([Buffer.from('segundo')]));
  expect(sincronizadas()).toEqual(['cd', '.']);
});

test('the mark: none at first; kept in the folder once marked, and read back', async () => {
  expect(await local.marca()).toBeNull();
  await local.marcar('0190f000-0000-7000-8000-00000000marc');
  expect(await local.marca()).toBe('0190f000-0000-7000-8000-00000000marc');
  expect(await new ArmazenamentoLocal(dir).marca()).toBe('0190f000-0000-7000-8000-00000000marc');
  // no leftover of the write beside it
  expect(readdirSync(dir).filter((n) => n.startsWith('marca-do-armazenamento'))).toEqual(['marca-do-armazenamento']);
});

test('a source that fails midway leaves nothing behind, and its error comes back as it was', async () => {
  const falha = new Error('cliente sumiu');
  const origem = new Readable({ read() {} });
  origem.push(Buffer.alloc(1000));
  setImmediate(() => origem.destroy(falha));
  await expect(local.gravar('0190f000-0000-7000-8000-0000000000cd', origem)).rejects.toBe(falha);
  expect(readdirSync(path.join(dir, 'parciais'))).toEqual([]);
  expect(existsSync(path.join(dir, 'cd'))).toBe(false);
});

test('a source failing as the upload starts leaves no partial file either (its removal waits for the file\'s opening)', async () => {
  // a race of the file's opening and its removal on the thread pool, so a guard rather than a
  // reproduction: before the wait, 33 of 3,000 such uploads left an empty partial file on a busy
  // machine, and fewer on an idle one
  for (let i = 0; i < 600; i++) {
    const origem = new Readable({ read() {} });
    setTimeout(() => origem.destroy(new Error('cliente sumiu')), i % 4);
    await expect(local.gravar(`0190f000-0000-7000-8000-${String(i).padStart(12, '0')}`, origem)).rejects.toThrow('cliente sumiu');
  }
  expect(readdirSync(path.join(dir, 'parciais'))).toEqual([]);
});

test('a key is an id: anything that could name a path elsewhere is refused before touching the disk', async () => {
  for (const chave of ['../fora', 'a/b', '..', '', 'a\\b', 'x'.repeat(129)]) {
    await expect(local.gravar(chave, Readable.from([Buffer.from('x')]))).rejects.toThrow(/invalid storage key/);
    await expect(local.ler(chave)).rejects.toThrow(/invalid storage key/);
    await expect(local.remover(chave)).rejects.toThrow(/invalid storage key/);
  }
  expect(readdirSync(dir)).toEqual(['parciais']);
});

test('on start, partial files abandoned by a crash (over an hour old) are swept; a recent one is left alone', async () => {
  const velho = path.join(dir, 'parciais', 'velho.1');
  const recente = path.join(dir, 'parciais', 'recente.1');
  writeFileSync(velho, 'x');
  writeFileSync(recente, 'x');
  const duasHorasAtras = (Date.now() - 2 * 3600_000) / 1000;
  utimesSync(velho, duasHorasAtras, duasHorasAtras);
  await local.preparar();
  expect(readdirSync(path.join(dir, 'parciais'))).toEqual(['recente.1']);
});

test('the sweep removes only files: a folder or a link left in parciais/ stays, and the start goes on', async () => {
  const pasta = path.join(dir, 'parciais', 'copia-de-um-operador');
  mkdirSync(pasta);
  writeFileSync(path.join(pasta, 'dentro'), 'x');
  const alvo = path.join(dir, 'fora-de-parciais');
  writeFileSync(alvo, 'x');
  const ligacao = path.join(dir, 'parciais', 'ligacao');
  symlinkSync(alvo, ligacao);
  const velho = path.join(dir, 'parciais', 'velho.1');
  writeFileSync(velho, 'x');
  const duasHorasAtras = (Date.now() - 2 * 3600_000) / 1000;
  for (const p of [pasta, velho]) utimesSync(p, duasHorasAtras, duasHorasAtras);
  lutimesSync(ligacao, duasHorasAtras, duasHorasAtras);
  await expect(local.preparar()).resolves.toBeUndefined();
  expect(readdirSync(path.join(dir, 'parciais')).sort()).toEqual(['copia-de-um-operador', 'ligacao']);
  expect(readdirSync(pasta)).toEqual(['dentro']);
  expect(existsSync(alvo)).toBe(true);
});

test('while the service runs, a partial file abandoned since it started is swept too, every quarter of the abandonment time', async () => {
  const rapido = new ArmazenamentoLocal(dir, 2000);
  await rapido.preparar();
  const velho = path.join(dir, 'parciais', 'apos-o-inicio.1');
  writeFileSync(velho, 'x');
  const passado = (Date.now() - 10_000) / 1000;
  utimesSync(velho, passado, passado);
  const recente = path.join(dir, 'parciais', 'em-curso.1');
  writeFileSync(recente, 'x');
  for (let i = 0; i < 40 && existsSync(velho); i++) await new Promise((r) => setTimeout(r, 50));
  expect(readdirSync(path.join(dir, 'parciais'))).toEqual(['em-curso.1']);
});

test('the abandonment time is at least an hour, and longer than an upload may take', () => {
  expect(abandonoDeParcialMs(0)).toBe(3600_000);
  expect(abandonoDeParcialMs(3600_000)).toBe(3900_000);
  expect(abandonoDeParcialMs(6 * 3600_000)).toBeGreaterThan(6 * 3600_000);
});

describe('Content-Disposition of a download (DESIGN §7 downloads; RFC 6266, RFC 8187)', () => {
  test.each([
    ['relatorio.pdf', `attachment; filename="relatorio.pdf"; filename*=UTF-8''relatorio.pdf`],
    ['São Paulo (1).txt', `attachment; filename="S_o Paulo (1).txt"; filename*=UTF-8''S%C3%A3o%20Paulo%20%281%29.txt`],
    ['a"b\\c.txt', `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b_c.txt`],
    ['../../etc/passwd', `attachment; filename=".._.._etc_passwd"; filename*=UTF-8''.._.._etc_passwd`],
    ['100%.txt', `attachment; filename="100_.txt"; filename*=UTF-8''100%25.txt`],
    ["it's*.txt", `attachment; filename="it's*.txt"; filename*=UTF-8''it%27s%2A.txt`],
    ['😀.png', `attachment; filename="__.png"; filename*=UTF-8''%F0%9F%98%80.png`],
    ['\ud800x', `attachment; filename="_x"; filename*=UTF-8''_x`],
    // C1 controls, and bidirectional controls that would show `fatura\u202Efdp.exe` as `faturaexe.pdf`
    ['a\u0085b\u009f.txt', `attachment; filename="a_b_.txt"; filename*=UTF-8''a_b_.txt`],
    ['fatura\u202Efdp.exe', `attachment; filename="fatura_fdp.exe"; filename*=UTF-8''fatura_fdp.exe`],
    ['\u2067x\u2069\u200e\u200f\u061c.pdf', `attachment; filename="_x____.pdf"; filename*=UTF-8''_x____.pdf`],
    // joiners inside an emoji are not controls: kept
    ['👩\u200d💻.png', `attachment; filename="_____.png"; filename*=UTF-8''%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB.png`],
  ])('%s', (nome, esperado) => {
    expect(disposicaoDeAnexo(nome)).toBe(esperado);
  });
});
