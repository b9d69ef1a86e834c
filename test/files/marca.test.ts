import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ArmazenamentoLocal } from '../../api/files/armazenamento-local';
import { varrerBytesAApagar } from '../../api/files/arquivos';
import { conferirMarcaDoArmazenamento } from '../../api/files/marca';
import { config } from '../../config';
import { banco, lerLinhas } from '../../lib/database';
import { dormir } from '../helpers/espera';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { esperarProblema } from '../helpers/http';
import { arquivosNoDisco, caminhoNoDisco, filesDe } from './apoio';

/**
 * One store for every process of the service (api/files/marca.ts): the store carries a mark the
 * database records at the first start, and a process whose store carries another, or none, does
 * not start, since it would count bytes it cannot see as removed. LOCALHOST takes the folder it
 * finds instead, with a warning. Outside LOCALHOST unless a test says otherwise.
 */
let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
const pastas: string[] = [];
let original: { diretorio: string; ambiente: string };
const diretorio = () => config().files.diretorio;
const marcaNaPasta = (pasta = diretorio()) => readFileSync(path.join(pasta, 'marca-do-armazenamento'), 'utf8').trim();

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false });
  files = filesDe(suite);
  original = { diretorio: diretorio(), ambiente: config().ambiente };
});
beforeEach(() => Object.assign(config(), { ambiente: 'PRODUCTION' }));
afterEach(async () => {
  Object.assign(config(), { ambiente: original.ambiente });
  config().files.diretorio = original.diretorio;
  // the suite's own store, as its start left it
  await banco('files').query('UPDATE marca_do_armazenamento SET marca = ?', { replacements: [marcaNaPasta()] });
  await conferirMarcaDoArmazenamento();
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
const devidos = async () => (await lerLinhas<{ n: number }>(banco('files'), 'SELECT COUNT(*) AS n FROM arquivo_a_apagar', []))[0].n;

test('the first start marks the store and records the mark; the same store passes again', async () => {
  expect(marcaNaPasta()).toMatch(/^[0-9a-f-]{36}$/);
  expect(await registrada()).toEqual([marcaNaPasta()]);
  await expect(conferirMarcaDoArmazenamento()).resolves.toBeUndefined();
  expect(await registrada()).toEqual([marcaNaPasta()]);
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

test('in LOCALHOST the folder found becomes the store (data/ wiped, the database kept), with a warning', async () => {
  Object.assign(config(), { ambiente: 'LOCALHOST' });
  const vazia = outraPasta();
  config().files.diretorio = vazia;
  await conferirMarcaDoArmazenamento();
  expect(await registrada()).toEqual([marcaNaPasta(vazia)]);
});

test('the first start since marks exist: an unmarked store holding none of the database\'s newest files is refused; one holding them is marked', async () => {
  const app = await files.novoAplicativo();
  expect((await files.enviar(app.token, 'a.txt', 'a')).status).toBe(201);
  // as an upgrade finds it: files listed, no mark recorded, the real folder not yet marked
  await banco('files').query('DELETE FROM marca_do_armazenamento');
  const marcaAntiga = marcaNaPasta();
  rmSync(path.join(diretorio(), 'marca-do-armazenamento'));
  config().files.diretorio = outraPasta();
  await expect(conferirMarcaDoArmazenamento()).rejects.toThrow(/carries no mark and holds none of the database's newest files/);
  expect(await registrada()).toEqual([]);
  config().files.diretorio = original.diretorio;
  await conferirMarcaDoArmazenamento();
  expect(await registrada()).toEqual([marcaNaPasta()]);
  expect(marcaNaPasta()).not.toBe(marcaAntiga);
});

test('a store that loses its mark while the process runs (its volume unmounted) gets no removal and no upload: the bytes stay owed, and go once it is back', async () => {
  const app = await files.novoAplicativo();
  const { id } = (await files.enviar(app.token, 'b.txt', 'b')).body;
  const marca = marcaNaPasta();
  rmSync(path.join(diretorio(), 'marca-do-armazenamento'));
  // past the few seconds a mark read right is taken as still right
  await dormir(5_100);
  expect((await files.api.del(`/arquivo/${id}`, { token: app.token })).status).toBe(204);
  expect(existsSync(path.join(diretorio(), caminhoNoDisco(id)))).toBe(true);
  expect(await devidos()).toBeGreaterThan(0);
  await expect(varrerBytesAApagar()).resolves.toBe(0);
  // nor are bytes stored there meanwhile: an upload answers 503, and readiness says the store is not ready
  const antes = arquivosNoDisco().sort();
  esperarProblema(await files.enviar(app.token, 'c.txt', 'c'), 503);
  expect(arquivosNoDisco().sort()).toEqual(antes);
  expect((await files.api.get('/pronto')).status).toBe(503);
  await new ArmazenamentoLocal(diretorio()).marcar(marca);
  expect((await files.api.get('/pronto')).status).toBe(200);
  expect(await varrerBytesAApagar()).toBeGreaterThan(0);
  expect(existsSync(path.join(diretorio(), caminhoNoDisco(id)))).toBe(false);
}, 30_000);

test('a database made anew beside a marked store takes the store’s mark', async () => {
  const marca = marcaNaPasta();
  await banco('files').query('DELETE FROM marca_do_armazenamento');
  await conferirMarcaDoArmazenamento();
  expect(await registrada()).toEqual([marca]);
});
