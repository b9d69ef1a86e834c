import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { chavesOrdenadas, marca, RFC3339 } from './apoio';

/** Sectors, positions and functions (DESIGN §3, DESIGN §10): GET and POST /setor, /cargo, /funcao. */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;
/** One logged non-master user for the whole file: password hashes are slow on purpose. */
let comum: { usuario: any; token: string };
let app: { token: string };

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
  comum = await id.criarUsuarioLogado();
  app = await id.criarAplicativo();
});
afterAll(() => suite.encerrar());

describe.each(['setor', 'cargo', 'funcao'])('/%s (DESIGN §10)', (tipo) => {
  const caminho = `/${tipo}`;

  test('POST by a master answers 201 {id, nome, criado_em, atualizado_em}, the same a later GET shows', async () => {
    const nome = `Novo ${marca()}`;
    const res = await id.api.post(caminho, { token: admin, body: { nome } });
    expect(res.status).toBe(201);
    expect(chavesOrdenadas(res.body)).toEqual(['atualizado_em', 'criado_em', 'id', 'nome']);
    expect(res.body.nome).toBe(nome);
    expect(res.body.criado_em).toMatch(RFC3339);
    expect(res.body.atualizado_em).toMatch(RFC3339);
    const lista = await id.api.get(caminho, { token: admin });
    expect(lista.body).toContainEqual(res.body);
  });

  test('POST trims the name', async () => {
    const m = marca();
    const res = await id.api.post(caminho, { token: admin, body: { nome: `  Aparado ${m}  ` } });
    expect(res.body.nome).toBe(`Aparado ${m}`);
  });

  test('POST is master only: a non-master user and an application token get 403, nothing is created', async () => {
    const nome = `Proibido ${marca()}`;
    esperarProblema(await id.api.post(caminho, { token: comum.token, body: { nome } }), 403);
    esperarProblema(await id.api.post(caminho, { token: app.token, body: { nome } }), 403);
    esperarProblema(await id.api.post(caminho, { body: { nome } }), 401);
    const lista = await id.api.get(caminho, { token: admin });
    expect(lista.body.map((c: any) => c.nome)).not.toContain(nome);
  });

  test('a duplicate name answers 409, whatever its case (unique name)', async () => {
    const nome = `Unico ${marca()}`;
    expect((await id.api.post(caminho, { token: admin, body: { nome } })).status).toBe(201);
    esperarProblema(await id.api.post(caminho, { token: admin, body: { nome } }), 409);
    esperarProblema(await id.api.post(caminho, { token: admin, body: { nome: nome.toUpperCase() } }), 409);
    const lista = await id.api.get(caminho, { token: admin });
    expect(lista.body.filter((c: any) => c.nome.toLowerCase() === nome.toLowerCase())).toHaveLength(1);
  });

  test('names that differ only by an emoji are two names; the same emoji, in another case or accent, is still the one name', async () => {
    const nome = `Time ${marca()}`;
    expect((await id.api.post(caminho, { token: admin, body: { nome: `${nome} 🚀` } })).status).toBe(201);
    expect((await id.api.post(caminho, { token: admin, body: { nome: `${nome} 🎯` } })).status).toBe(201);
    esperarProblema(await id.api.post(caminho, { token: admin, body: { nome: `${nome.toUpperCase()} 🚀` } }), 409);
    esperarProblema(await id.api.post(caminho, { token: admin, body: { nome: `${nome.replace('Time', 'Tímé')} 🎯` } }), 409);
  });

  test('simultaneous creations with one name: one 201, the rest 409', async () => {
    const nome = `Corrida ${marca()}`;
    const respostas = await Promise.all([1, 2, 3].map(() => id.api.post(caminho, { token: admin, body: { nome } })));
    expect(respostas.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    for (const r of respostas.filter((x) => x.status === 409)) esperarProblema(r, 409);
    expect((await id.api.get(caminho, { token: admin })).body.filter((c: any) => c.nome === nome)).toHaveLength(1);
  });

  test('a body without a name answers 400 (DESIGN §4)', async () => {
    const antes = (await id.api.get(caminho, { token: admin })).body.length;
    esperarProblema(await id.api.post(caminho, { token: admin, body: {} }), 400);
    esperarProblema(await id.api.post(caminho, { token: admin, body: { nome: '   ' } }), 400);
    esperarProblema(await id.api.post(caminho, { token: admin, body: { nome: 'x'.repeat(201) } }), 400);
    expect((await id.api.get(caminho, { token: admin })).body).toHaveLength(antes);
  });

  test('GET lists alphabetically, and any logged user may read it', async () => {
    const m = marca();
    for (const n of ['Zulu', 'alfa', 'Mike']) await id.api.post(caminho, { token: admin, body: { nome: `${m} ${n}` } });
    const res = await id.api.get(caminho, { token: comum.token });
    expect(res.status).toBe(200);
    const nomes: string[] = res.body.map((c: any) => c.nome);
    expect(nomes.filter((n) => n.startsWith(m))).toEqual([`${m} alfa`, `${m} Mike`, `${m} Zulu`]);
    expect([...nomes].sort((a, b) => a.localeCompare(b, 'pt', { sensitivity: 'base' }))).toEqual(nomes);
  });

  test('GET without a token answers 401', async () => {
    esperarProblema(await id.api.get(caminho), 401);
  });
});
