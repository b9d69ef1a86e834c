import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ArmazenamentoLocal } from '../../api/files/armazenamento-local';
import { conferirMarcaDoArmazenamento } from '../../api/files/marca';
import { config } from '../../config';
import { banco, lerLinhas } from '../../lib/database';
import { ateOFim, comandoDaSuite } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * One store for every process of the service (api/files/marca.ts): the store carries a mark the
 * database records at the first start, and a process whose store carries another, or none, does
 * not start, since it would count bytes it cannot see as removed.
 */
let suite: SuiteDeTeste;
const pastas: string[] = [];
let original: string;
const diretorio = () => config().files.diretorio;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false });
  original = diretorio();
});
afterEach(() => {
  config().files.diretorio = original;
});
afterAll(async () => {
  for (const p of pastas) rmSync(p, { recursive: true, force: true });
  await suite?.encerrar();
});

const registrada = async () => (await lerLinhas<{ marca: string }>(banco('files'), 'SELECT marca FROM marca_do_armazenamento', [])).map((l) => l.marca);
const outraPasta = () => {
  const p = mkdtempSync(path.join(tmpdir(), 'outro-armazenamento-'));
  pastas.push(p);
  return p;
};

test('the first start marks the store and records the mark; the same store passes again', async () => {
  const marca = readFileSync(path.join(diretorio(), 'marca-do-armazenamento'), 'utf8').trim();
  expect(marca).toMatch(/^[0-9a-f-]{36}$/);
  expect(await registrada()).toEqual([marca]);
  await expect(conferirMarcaDoArmazenamento()).resolves.toBeUndefined();
  expect(await registrada()).toEqual([marca]);
});

test('a store without the mark (an empty folder of another host) or with another is refused, and nothing is marked or recorded', async () => {
  const antes = await registrada();
  const vazia = outraPasta();
  config().files.diretorio = vazia;
  await expect(conferirMarcaDoArmazenamento()).rejects.toThrow(/carries no mark where the database's files are in store/);
  expect(await new ArmazenamentoLocal(vazia).marca()).toBeNull();
  const outra = outraPasta();
  await new ArmazenamentoLocal(outra).marcar('0190f000-0000-7000-8000-0000000outra');
  config().files.diretorio = outra;
  await expect(conferirMarcaDoArmazenamento()).rejects.toThrow(/carries mark 0190f000-0000-7000-8000-0000000outra where/);
  expect(await registrada()).toEqual(antes);
});

test('a worker started with another FILES_DIRETORIO does not start: exit 1, its log saying why', async () => {
  const r = await ateOFim(comandoDaSuite(['worker', 'files-limpeza'], { ...process.env, FILES_DIRETORIO: outraPasta(), LOG_LEVEL: 'fatal' }));
  expect(r.codigo).toBe(1);
  expect(r.saida).toMatch(/does not see the service's store/);
}, 60_000);

test('a database made anew beside a marked store takes the store’s mark', async () => {
  const marca = readFileSync(path.join(diretorio(), 'marca-do-armazenamento'), 'utf8').trim();
  await banco('files').query('DELETE FROM marca_do_armazenamento');
  await conferirMarcaDoArmazenamento();
  expect(await registrada()).toEqual([marca]);
});
