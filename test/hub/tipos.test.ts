import { randomUUID } from 'node:crypto';
import { idDoAplicativoDe } from '../../lib/credenciais';
import { banco, novaConexao } from '../../lib/database';
import { TipoDeEvento } from '../../models/hub';
import { comONome } from '../../models/hub/tipo-de-evento';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DO_TIPO, chaves, ESQUEMA, Hub, hubDe, RFC3339, semCaixa, unico } from './apoio-admin';

/** Event types and their schema versions: /tipo_de_evento (DESIGN §5 and §10, SPEC §9.3). */

let suite: SuiteDeTeste;
let hub: Hub;
let admin: string;
const tag = unico('Tipo');
let dono: any;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub']);
  hub = hubDe(suite);
  admin = await hub.admin();
  [dono] = await hub.aplicativos(`${tag} Dono`);
});
afterAll(() => suite.encerrar());

const nomeNovo = (sufixo = 'criado') => `${unico('t').toLowerCase()}.${sufixo}`;
const criar = (body: Record<string, unknown>) => hub.api.post('/tipo_de_evento', { token: admin, body });
const ler = (id: string) => hub.api.get(`/tipo_de_evento/${id}`, { token: admin });
const novaVersao = (id: string, esquema: unknown = ESQUEMA) => hub.api.post(`/tipo_de_evento/${id}/versao`, { token: admin, body: { esquema } });
const todosOsTipos = async () => (await hub.api.get('/tipo_de_evento', { token: admin, query: { tamanho: 1000 } })).body;

describe('POST and GET /tipo_de_evento: the event type (DESIGN §10)', () => {
  test('answers 201 with exactly {id, nome, descricao, aplicativo_id, aplicativo_nome, versoes, criado_em, atualizado_em}; GET reads the same', async () => {
    const nome = nomeNovo();
    const res = await criar({ nome, descricao: 'Quando algo é criado', aplicativo_id: dono.id });
    expect(res.status).toBe(201);
    expect(chaves(res.body)).toEqual(CAMPOS_DO_TIPO);
    expect(res.body).toEqual({
      id: expect.any(String),
      nome,
      descricao: 'Quando algo é criado',
      aplicativo_id: dono.id,
      aplicativo_nome: dono.nome,
      versoes: [],
      criado_em: expect.stringMatching(RFC3339),
      atualizado_em: expect.stringMatching(RFC3339),
    });
    expect((await ler(res.body.id)).body).toEqual(res.body);
  });

  test('an empty or blank descricao is stored as null, at creation and in a change', async () => {
    const criado = await criar({ nome: nomeNovo(), descricao: '', aplicativo_id: dono.id });
    expect(criado.status).toBe(201);
    expect(criado.body.descricao).toBeNull();
    await hub.api.patch(`/tipo_de_evento/${criado.body.id}`, { token: admin, body: { descricao: 'algo' } });
    const mudado = await hub.api.patch(`/tipo_de_evento/${criado.body.id}`, { token: admin, body: { descricao: '   ' } });
    expect(mudado.status).toBe(200);
    expect(mudado.body.descricao).toBeNull();
    expect((await ler(criado.body.id)).body.descricao).toBeNull();
  });

  test('descricao is optional and null when absent', async () => {
    const res = await criar({ nome: nomeNovo(), aplicativo_id: dono.id });
    expect(res.status).toBe(201);
    expect(res.body.descricao).toBeNull();
  });

  test('GET /tipo_de_evento is a page in name order whose total counts the live types', async () => {
    const [b, a] = [await hub.criarTipo(dono.id, { nome: `${tag}.b` }), await hub.criarTipo(dono.id, { nome: `${tag}.A` })];
    const pagina = await todosOsTipos();
    expect(pagina).toMatchObject({ pagina: 1, tamanho: 1000, total: pagina.itens.length });
    const nomes = pagina.itens.map((t: any) => t.nome);
    expect([...nomes].sort(semCaixa)).toEqual(nomes);
    expect(pagina.itens.filter((t: any) => t.nome.startsWith(tag)).map((t: any) => t.id)).toEqual([a.id, b.id]);
    expect(pagina.itens.find((t: any) => t.id === a.id)).toEqual(a);
    const primeira = await hub.api.get('/tipo_de_evento', { token: admin, query: { tamanho: 1 } });
    expect(primeira.body).toEqual({ itens: [pagina.itens[0]], pagina: 1, tamanho: 1, total: pagina.total });
  });

  test('a name already used by a live type answers 409 and creates nothing', async () => {
    const nome = nomeNovo();
    await hub.criarTipo(dono.id, { nome });
    const antes = (await todosOsTipos()).total;
    expect(esperarProblema(await criar({ nome, aplicativo_id: dono.id }), 409).code).toBe('conflito');
    expect((await todosOsTipos()).total).toBe(antes);
  });

  test('the name of a deleted type can be used again', async () => {
    const nome = nomeNovo();
    const velho = await hub.criarTipo(dono.id, { nome });
    expect((await hub.api.del(`/tipo_de_evento/${velho.id}`, { token: admin })).status).toBe(204);
    const res = await criar({ nome, aplicativo_id: dono.id });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(velho.id);
  });

  /** Every type stored, deleted ones included. */
  const tiposGuardados = async () =>
    Number(((await banco('hub').query('SELECT COUNT(*) AS n FROM tipo_de_evento', { type: 'SELECT' })) as { n: number }[])[0].n);

  test('an unknown owner application answers 422 naming aplicativo_id, nothing stored', async () => {
    const antes = await tiposGuardados();
    const problema = esperarProblema(await criar({ nome: nomeNovo(), aplicativo_id: randomUUID() }), 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'aplicativo_id' })]);
    expect(await tiposGuardados()).toBe(antes);
  });

  test.each([
    ['a name with spaces', { nome: 'tipo com espaço' }, 'nome'],
    ['a name with an empty part', { nome: 'tipo..criado' }, 'nome'],
    ['no name', { nome: undefined }, 'nome'],
    ['no owner', { aplicativo_id: undefined }, 'aplicativo_id'],
    ['an unknown field', { versao: 1 }, 'versao'],
  ])('%s answers 400 naming the field, nothing stored', async (_caso, campos, campo) => {
    const antes = await tiposGuardados();
    const problema = esperarProblema(await criar({ nome: nomeNovo(), aplicativo_id: dono.id, ...campos }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
    expect(await tiposGuardados()).toBe(antes);
  });

  test('an unknown id answers 404', async () => {
    esperarProblema(await ler(randomUUID()), 404);
  });
});

describe('PATCH and DELETE /tipo_de_evento/{id} (DESIGN §5)', () => {
  test('PATCH changes name and description only; the owner is not in the body (400)', async () => {
    const tipo = await hub.criarTipo(dono.id);
    const nome = nomeNovo('renomeado');
    const res = await hub.api.patch(`/tipo_de_evento/${tipo.id}`, { token: admin, body: { nome, descricao: 'Nova' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: tipo.id, nome, descricao: 'Nova', aplicativo_id: dono.id, versoes: tipo.versoes });
    const [outro] = await hub.aplicativos(`${tag} Outro dono`);
    const problema = esperarProblema(await hub.api.patch(`/tipo_de_evento/${tipo.id}`, { token: admin, body: { aplicativo_id: outro.id } }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'aplicativo_id' })]);
    expect((await ler(tipo.id)).body).toEqual(res.body);
  });

  test('renaming to a name in use answers 409 and nothing changes; keeping its own name is accepted', async () => {
    const a = await hub.criarTipo(dono.id);
    const b = await hub.criarTipo(dono.id);
    esperarProblema(await hub.api.patch(`/tipo_de_evento/${b.id}`, { token: admin, body: { nome: a.nome } }), 409);
    expect((await ler(b.id)).body).toEqual(b);
    expect((await hub.api.patch(`/tipo_de_evento/${b.id}`, { token: admin, body: { nome: b.nome } })).status).toBe(200);
  });

  test('a rename arriving while a deletion is under way waits for it and answers 404; one racing another rename to the same name meets the unique key: 409, as the rule says', async () => {
    const conexao = await novaConexao('hub');
    try {
      const sumindo = await hub.criarTipo(dono.id);
      await conexao.query('START TRANSACTION');
      await conexao.query('UPDATE tipo_de_evento SET deletado_em = NOW(3) WHERE id = ?', [sumindo.id]);
      const renomear = hub.api.patch(`/tipo_de_evento/${sumindo.id}`, { token: admin, body: { nome: nomeNovo('tarde') } });
      await esperarOutraConexao(conexao, 'the rename waiting on the type', ['%FROM `tipo_de_evento`%FOR UPDATE%']);
      await conexao.query('COMMIT');
      esperarProblema(await renomear, 404);
      const [[linha]] = (await conexao.query('SELECT nome FROM tipo_de_evento WHERE id = ?', [sumindo.id])) as any;
      expect(linha.nome).toBe(sumindo.nome);

      const [a, b] = [await hub.criarTipo(dono.id), await hub.criarTipo(dono.id)];
      const disputado = nomeNovo('disputado');
      await conexao.query('START TRANSACTION');
      await conexao.query('UPDATE tipo_de_evento SET nome = ? WHERE id = ?', [disputado, a.id]);
      const outro = hub.api.patch(`/tipo_de_evento/${b.id}`, { token: admin, body: { nome: disputado } });
      await esperarOutraConexao(conexao, 'the rename waiting on the name', ['UPDATE `tipo_de_evento`%']);
      await conexao.query('COMMIT');
      expect(esperarProblema(await outro, 409).detail).toBe('Já existe um tipo de evento com este nome.');
      expect((await ler(b.id)).body.nome).toBe(b.nome);
    } finally {
      await conexao.end();
    }
  });

  test('a type with live subscriptions cannot be deleted: 409, and it stays; once they are gone it can', async () => {
    const [assinante] = await hub.aplicativos(`${tag} Assinante`);
    const tipo = await hub.criarTipo(dono.id);
    const assinatura = await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: tipo.id });
    expect(esperarProblema(await hub.api.del(`/tipo_de_evento/${tipo.id}`, { token: admin }), 409).code).toBe('conflito');
    expect((await ler(tipo.id)).status).toBe(200);
    expect((await hub.api.get(`/assinatura/${assinatura.id}`, { token: admin })).status).toBe(200);

    expect((await hub.api.del(`/assinatura/${assinatura.id}`, { token: admin })).status).toBe(204);
    const res = await hub.api.del(`/tipo_de_evento/${tipo.id}`, { token: admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    esperarProblema(await ler(tipo.id), 404);
    expect((await todosOsTipos()).itens.map((t: any) => t.id)).not.toContain(tipo.id);
  });
});

describe('schema versions (DESIGN §5 and §10, SPEC §9.3)', () => {
  test('POST /versao answers 201 {versao, situacao "ativa", esquema, criada_em}; versions number 1, 2, 3 and show in the type', async () => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 0 });
    const esquemas = [ESQUEMA, { type: 'object', required: ['a'] }, { type: 'object', required: ['a', 'b'] }];
    for (const [i, esquema] of esquemas.entries()) {
      const res = await novaVersao(tipo.id, esquema);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ versao: i + 1, situacao: 'ativa', esquema, criada_em: expect.stringMatching(RFC3339) });
    }
    const lido = (await ler(tipo.id)).body;
    expect(lido.versoes).toEqual([1, 2, 3].map((versao) => ({ versao, situacao: 'ativa', criada_em: expect.stringMatching(RFC3339) })));
    const v2 = await hub.api.get(`/tipo_de_evento/${tipo.id}/versao/2`, { token: admin });
    expect(v2.body).toEqual({ versao: 2, situacao: 'ativa', esquema: esquemas[1], criada_em: lido.versoes[1].criada_em });
  });

  test('a version created while its type is being deleted: 404, and no version is left', async () => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 0 });
    const trava = await novaConexao('hub');
    try {
      // a deletion under way holds the type (as DELETE /tipo_de_evento does), marked deleted, not yet committed
      await trava.beginTransaction();
      await trava.query('UPDATE tipo_de_evento SET deletado_em = NOW(3) WHERE id = ?', [tipo.id]);
      const criando = novaVersao(tipo.id);
      await esperarOutraConexao(trava, 'the version waiting on the type', ['%FROM `tipo_de_evento`%FOR UPDATE%']);
      await trava.commit();
      esperarProblema(await criando, 404);
    } finally {
      await trava.end();
    }
    const [[{ n }]] = (await banco('hub').query('SELECT COUNT(*) AS n FROM versao_de_evento WHERE tipo_de_evento_id = ?', { replacements: [tipo.id] })) as any;
    expect(Number(n)).toBe(0);
  });

  test('versions created at the same time still number 1 to 5, none lost or repeated', async () => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 0 });
    const respostas = await Promise.all(Array.from({ length: 5 }, () => novaVersao(tipo.id)));
    expect(respostas.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(respostas.map((r) => r.body.versao).sort()).toEqual([1, 2, 3, 4, 5]);
    expect((await ler(tipo.id)).body.versoes.map((v: any) => v.versao)).toEqual([1, 2, 3, 4, 5]);
  });

  test.each([
    ['a type that is not a JSON Schema type', { type: 'texto' }],
    ['required that is not a list', { type: 'object', required: 'a' }],
    // a keyword or format the validator does not know would be ignored, so the data would go unchecked
    ['a misspelled keyword', { type: 'object', requried: ['a'] }],
    ['a keyword of a later draft', { type: 'object', properties: { a: { type: 'string' } }, unevaluatedProperties: false }],
    ['an unknown format', { type: 'string', format: 'cpf' }],
    // validates through a promise, which would pass any data
    ['an async schema', { $async: true, type: 'object', required: ['a'] }],
  ])('an invalid JSON Schema (%s) answers 400 naming esquema and creates no version', async (_caso, esquema) => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 1 });
    const problema = esperarProblema(await novaVersao(tipo.id, esquema), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'esquema' })]);
    expect((await ler(tipo.id)).body.versoes.map((v: any) => v.versao)).toEqual([1]);
  });

  test('esquema missing or not an object answers 400; an unknown type 404', async () => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 0 });
    esperarProblema(await hub.api.post(`/tipo_de_evento/${tipo.id}/versao`, { token: admin, body: {} }), 400);
    esperarProblema(await novaVersao(tipo.id, 'texto'), 400);
    esperarProblema(await novaVersao(randomUUID()), 404);
    expect((await ler(tipo.id)).body.versoes).toEqual([]);
  });

  test('PATCH /versao/{versao} moves the situation between ativa, depreciada and desligada, and the type shows it', async () => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 2 });
    for (const situacao of ['depreciada', 'desligada', 'ativa', 'desligada'] as const) {
      const res = await hub.api.patch(`/tipo_de_evento/${tipo.id}/versao/1`, { token: admin, body: { situacao } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ versao: 1, situacao, esquema: ESQUEMA });
      expect((await ler(tipo.id)).body.versoes.map((v: any) => [v.versao, v.situacao])).toEqual([
        [1, situacao],
        [2, 'ativa'],
      ]);
    }
  });

  test('PATCH /versao/{versao}: an unknown situation answers 400, an unknown version or type 404; nothing changes', async () => {
    const tipo = await hub.criarTipo(dono.id, { versoes: 1 });
    const problema = esperarProblema(await hub.api.patch(`/tipo_de_evento/${tipo.id}/versao/1`, { token: admin, body: { situacao: 'apagada' } }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'situacao' })]);
    esperarProblema(await hub.api.patch(`/tipo_de_evento/${tipo.id}/versao/2`, { token: admin, body: { situacao: 'ativa' } }), 404);
    esperarProblema(await hub.api.patch(`/tipo_de_evento/${randomUUID()}/versao/1`, { token: admin, body: { situacao: 'ativa' } }), 404);
    esperarProblema(await hub.api.get(`/tipo_de_evento/${tipo.id}/versao/9`, { token: admin }), 404);
    // a version is written as digits: 1.0 or 1e0 is not version 1
    for (const versao of ['1.0', '1e0', '0x1', '0']) {
      const p = esperarProblema(await hub.api.patch(`/tipo_de_evento/${tipo.id}/versao/${versao}`, { token: admin, body: { situacao: 'depreciada' } }), 400);
      expect(p.errors).toEqual([expect.objectContaining({ campo: 'versao' })]);
    }
    expect((await ler(tipo.id)).body).toEqual(tipo);
  });
});

describe('the identity application’s own types (DESIGN §10)', () => {
  test('colaborador.criado, .atualizado and .removido exist once, version 1 active, owned by identity’s hub application', async () => {
    await hub.sincronizar();
    const identityNoAuth = await idDoAplicativoDe('identity');
    expect(identityNoAuth).toEqual(expect.any(String));
    const doIdentity = await hub.doHub(identityNoAuth!);
    expect(doIdentity).toMatchObject({ ativo: true, quantidade_de_tipos_de_evento: 3 });

    const nomes = ['colaborador.atualizado', 'colaborador.criado', 'colaborador.removido'];
    await hub.sincronizar(); // a second listing creates no copies
    const tipos = (await todosOsTipos()).itens.filter((t: any) => t.nome.startsWith('colaborador.'));
    expect(tipos.map((t: any) => t.nome)).toEqual(nomes);
    for (const t of tipos) {
      expect(t).toMatchObject({ aplicativo_id: doIdentity.id, aplicativo_nome: doIdentity.nome });
      expect(t.versoes).toEqual([{ versao: 1, situacao: 'ativa', criada_em: expect.stringMatching(RFC3339) }]);
    }
  });

  test('identity publishes them by name: renaming or deleting one answers 409 and leaves it as it was', async () => {
    await hub.sincronizar();
    const criado = (await todosOsTipos()).itens.find((t: any) => t.nome === 'colaborador.criado');
    esperarProblema(await hub.api.patch(`/tipo_de_evento/${criado.id}`, { token: admin, body: { nome: 'colaborador.novo' } }), 409);
    esperarProblema(await hub.api.del(`/tipo_de_evento/${criado.id}`, { token: admin }), 409);
    const depois = await hub.api.patch(`/tipo_de_evento/${criado.id}`, { token: admin, body: { descricao: 'ainda do identity' } });
    expect(depois.body).toMatchObject({ nome: 'colaborador.criado', descricao: 'ainda do identity' });
  });

  test('nor can their version 1, the one identity publishes in, be switched off (409); deprecating it informs only, and is allowed', async () => {
    await hub.sincronizar();
    const criado = (await todosOsTipos()).itens.find((t: any) => t.nome === 'colaborador.criado');
    const mudar = (situacao: string) => hub.api.patch(`/tipo_de_evento/${criado.id}/versao/1`, { token: admin, body: { situacao } });
    esperarProblema(await mudar('desligada'), 409);
    expect((await mudar('depreciada')).body.situacao).toBe('depreciada');
    expect((await mudar('ativa')).body.situacao).toBe('ativa');
  });

  test('their names are reserved: before identity\'s types exist, another application can neither create nor rename a type to one (409)', async () => {
    // as on a hub whose sync has not yet seen the identity application
    await banco('hub').query("DELETE v FROM versao_de_evento v JOIN tipo_de_evento t ON t.id = v.tipo_de_evento_id WHERE t.nome LIKE 'colaborador.%'");
    await banco('hub').query("DELETE FROM tipo_de_evento WHERE nome LIKE 'colaborador.%'");
    const problema = esperarProblema(await criar({ nome: 'colaborador.criado', aplicativo_id: dono.id }), 409);
    expect(problema.detail).toContain('reservado');
    esperarProblema(await criar({ nome: 'Colaborador.Atualizado', aplicativo_id: dono.id }), 409);
    const outro = (await criar({ nome: nomeNovo(), aplicativo_id: dono.id })).body;
    esperarProblema(await hub.api.patch(`/tipo_de_evento/${outro.id}`, { token: admin, body: { nome: 'colaborador.removido' } }), 409);
    expect((await ler(outro.id)).body.nome).toBe(outro.nome);

    await hub.sincronizar();
    const doIdentity = await hub.doHub((await idDoAplicativoDe('identity'))!);
    const tipos = (await todosOsTipos()).itens.filter((t: any) => t.nome.startsWith('colaborador.'));
    expect(tipos.map((t: any) => [t.nome, t.aplicativo_id])).toEqual(
      ['colaborador.atualizado', 'colaborador.criado', 'colaborador.removido'].map((nome) => [nome, doIdentity.id]),
    );
  });
});

test("a type is found by name through the unique key of live names, not by reading every type (the publication's lookup, the name's check, the application sync)", async () => {
  const tipo = await hub.criarTipo(dono.id, { nome: `${unico('idx').toLowerCase()}.criado` });
  let sql = '';
  const achado = await TipoDeEvento.findOne({ where: comONome(tipo.nome.toUpperCase()), attributes: ['id'], logging: (s: string) => (sql = s.replace(/^Executing \([^)]*\): /, '')) });
  // the name compared as the database compares names: without case
  expect(achado?.id).toBe(tipo.id);
  const [plano] = (await banco('hub').query(`EXPLAIN ${sql}`)) as [{ key: string | null; type: string }[], unknown];
  expect(plano[0]).toMatchObject({ key: 'tipo_de_evento_nome_unico', type: 'const' });
  // a deleted one of that name is not found
  expect((await hub.api.del(`/tipo_de_evento/${tipo.id}`, { token: admin })).status).toBe(204);
  expect(await TipoDeEvento.findOne({ where: comONome(tipo.nome), attributes: ['id'] })).toBeNull();
});
