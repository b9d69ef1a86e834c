import { compactarContagemDeArquivos, totalDeArquivos } from '../../api/files/contagem';
import { banco } from '../../lib/database';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { filesDe } from './apoio';

/**
 * `total` of GET /arquivo, kept by the arquivo table's triggers as base counts plus deltas
 * (migration 0006): exact at every read, folded or not, through uploads and deletions, each
 * application's apart; and the page's files read by the ids of its place in the list.
 */
let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false });
  files = filesDe(suite);
});
afterAll(() => suite.encerrar());

const listar = async (token: string, query: Record<string, number> = {}) => (await files.api.get('/arquivo', { token, query })).body;
const deltasDe = async (aplicativoId: string) =>
  Number(
    ((await banco('files').query('SELECT COUNT(*) AS n FROM arquivo_contagem_delta WHERE aplicativo_id = ?', {
      replacements: [aplicativoId],
      plain: true,
    })) as { n: number }).n,
  );

test('the total follows uploads and deletions, each application apart, before and after the deltas are folded', async () => {
  const [dono, outro] = [await files.novoAplicativo(), await files.novoAplicativo()];
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await files.enviar(dono.token, `f${i}.txt`, `conteudo ${i}`)).body.id);
  await files.enviar(outro.token, 'alheio.txt', 'x');
  expect((await listar(dono.token)).total).toBe(5);

  await compactarContagemDeArquivos();
  expect(await deltasDe(dono.id)).toBe(0);
  expect(await totalDeArquivos(dono.id)).toBe(5);
  expect(await totalDeArquivos(outro.id)).toBe(1);

  // a deletion takes one out; deleting it again (404) changes nothing
  expect((await files.api.del(`/arquivo/${ids[1]}`, { token: dono.token })).status).toBe(204);
  expect((await files.api.del(`/arquivo/${ids[1]}`, { token: dono.token })).status).toBe(404);
  expect((await listar(dono.token)).total).toBe(4);
  // a change of a deleted file's row that leaves it deleted logs nothing
  await compactarContagemDeArquivos();
  await banco('files').query("UPDATE arquivo SET nome = 'renomeado' WHERE id IN (?)", { replacements: [[ids[1], ids[2]]] });
  expect(await deltasDe(dono.id)).toBe(0);

  // pages: most recent first, by their place in the list of live files
  const pagina2 = await listar(dono.token, { pagina: 2, tamanho: 2 });
  expect(pagina2).toEqual(expect.objectContaining({ pagina: 2, tamanho: 2, total: 4 }));
  expect(pagina2.itens.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[0]]);
  expect(pagina2.itens[0]).toEqual(expect.objectContaining({ nome: 'renomeado', url: expect.stringContaining(`/arquivo/${ids[2]}/conteudo?`) }));
  expect((await listar(dono.token, { pagina: 3, tamanho: 2 })).itens).toEqual([]);
  expect((await listar(outro.token)).total).toBe(1);
});

test('files stored in the same millisecond keep one order: the id breaks the tie', async () => {
  const dono = await files.novoAplicativo();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await files.enviar(dono.token, `g${i}.txt`, 'x')).body.id);
  await banco('files').query('UPDATE arquivo SET criado_em = ? WHERE id IN (?)', { replacements: [new Date('2026-01-01T00:00:00Z'), ids] });
  const ordem = [...ids].sort().reverse();
  const paginas = [];
  for (let pagina = 1; pagina <= 4; pagina++) paginas.push(...(await listar(dono.token, { pagina, tamanho: 1 })).itens.map((a: { id: string }) => a.id));
  expect(paginas).toEqual(ordem);
});
