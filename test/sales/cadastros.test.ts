import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { banco, novaConexao } from '../../lib/database';
import * as configDaSuite from '../../config';
import { carregarChaveDeCifra, cifrar, decifrar } from '../../api/sales/cifra';
import { digitosVerificadores } from '../../api/shared/cnpj';
import { ConfigSystem, Robo, Segredo } from '../../models/sales';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { identityDe } from '../helpers/identity';
import { eventoDeMensagem, idDoSuporte, RFC3339, Sales, salesDe, unico } from './apoio';

let suite: SuiteDeTeste;
let s: Sales;
let admin: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'sales']);
  s = salesDe(suite);
  admin = await s.admin();
});

afterAll(() => suite?.encerrar());

describe('DESIGN §10: POST /config_system (master)', () => {
  it('answers 201 with a generated token shown once; secrets are never answered, only whether they are set', async () => {
    const res = await s.api.post('/config_system', {
      token: admin,
      body: { tipo: 'suporte', nome: 'Chat da loja', url: 'https://chat.loja.test/', conta_id: 3, segredo_hmac: 'segredo-hmac-1', token_api: 'token-api-1' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tipo: 'suporte',
      nome: 'Chat da loja',
      url: 'https://chat.loja.test',
      conta_id: 3,
      numero: null,
      ativo: true,
      tem_segredo_hmac: true,
      tem_token_api: true,
      criado_em: expect.stringMatching(RFC3339),
      atualizado_em: expect.stringMatching(RFC3339),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // an answer with a credential is kept by no cache (RFC 6749 §5.1), as identity's
    expect(res.headers.get('cache-control')).toBe('no-store');
    const lido = await s.api.get(`/config_system/${res.body.id}`, { token: admin });
    expect(lido.body.token).toBeUndefined();
    const lista = await s.api.get('/config_system', { token: admin, query: { tipo: 'suporte' } });
    expect(lista.body.itens.find((c: any) => c.id === res.body.id)).toEqual({ ...res.body, token: undefined });
    for (const texto of [lido.text, lista.text]) {
      for (const segredo of ['segredo-hmac-1', 'token-api-1', res.body.token]) expect(texto).not.toContain(segredo);
    }
  });

  it('keeps the token as a hash and the secrets encrypted, never in the clear', async () => {
    const criado = await s.criarSistema('suporte', { token: 'um-token-escolhido-pelo-admin-0123', segredo_hmac: 'outro-segredo', token_api: 'outra-api' });
    expect(criado.token).toBe('um-token-escolhido-pelo-admin-0123');
    const linha = (await ConfigSystem.findByPk(criado.id))!;
    const guardado = JSON.stringify(linha.get({ plain: true }));
    for (const segredo of ['um-token-escolhido-pelo-admin-0123', 'outro-segredo', 'outra-api']) expect(guardado).not.toContain(segredo);
    expect(linha.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('token null is no token (a `?` field may be absent or null, SPEC §2): one is generated and works', async () => {
    const criado = await s.criarSistema('suporte', { token: null });
    expect(criado.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await s.webhook(criado, eventoDeMensagem({ conversa: idDoSuporte() }))).status).toBe(200);
  });

  it('a start given another SALES_CHAVE_DE_CIFRA than the secrets and tokens were stored under stops, naming it, and leaves the key in use as it was; the right key starts', async () => {
    const criado = await s.criarSistema('suporte', { segredo_hmac: 'segredo-da-chave-conferida' });
    const mensagem = /^invalid configuration: SALES_CHAVE_DE_CIFRA is not the key the sales secrets and webhook tokens were stored under$/;
    const real = configDaSuite.config();
    const comOutraChave = async (agir: () => Promise<unknown>) => {
      const outra = jest.spyOn(configDaSuite, 'config').mockReturnValue({ ...real, sales: { ...real.sales, chaveDeCifra: 'outra-chave-de-cifra-0123456789abcdef' } });
      try {
        return await agir();
      } finally {
        outra.mockRestore();
      }
    };
    // the key's mark, kept on the first start, tells it: with or without secrets stored
    expect(await Segredo.findByPk('marca-da-cifra')).not.toBeNull();
    await expect(comOutraChave(carregarChaveDeCifra)).rejects.toThrow(mensagem);
    // a service that kept secrets before the mark existed: one of them tells it, and the mark is not kept
    await Segredo.destroy({ where: { nome: 'marca-da-cifra' } });
    await expect(comOutraChave(carregarChaveDeCifra)).rejects.toThrow(mensagem);
    expect(await Segredo.findByPk('marca-da-cifra')).toBeNull();
    // the process kept its key: the system's secret still reads
    const linha = (await ConfigSystem.findByPk(criado.id))!;
    expect(decifrar(linha.segredo_hmac_cifrado!)).toBe('segredo-da-chave-conferida');
    await expect(carregarChaveDeCifra()).resolves.toBeUndefined();
    expect(await Segredo.findByPk('marca-da-cifra')).not.toBeNull();
  });

  it('a stored secret whose authentication tag was cut short is refused, not read', async () => {
    const inteiro = cifrar('segredo');
    const [versao, iv, tag, corpo] = inteiro.split('.');
    const curto = [versao, iv, Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url'), corpo].join('.');
    expect(decifrar(inteiro)).toBe('segredo');
    expect(() => decifrar(curto)).toThrow();
  });

  it('a messaging number keeps its digits; an HMAC secret belongs to the chat platform only', async () => {
    expect((await s.criarSistema('mensageiro', { numero: '+55 (11) 98888-7777' })).numero).toBe('5511988887777');
    const p = esperarProblema(await s.api.post('/config_system', { token: admin, body: { tipo: 'gateway', nome: 'g', segredo_hmac: 'segredo-hmac' } }), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'segredo_hmac' })]);
  });

  it('a messaging number belongs to one live messaging system (with or without the ninth digit): 409 naming numero, nothing stored; free again once that one is deleted', async () => {
    // a mobile's eight digits begin with 6 to 9: only then is the ninth digit optional
    const numero = `552198${String(Date.now()).slice(-7)}`;
    const semNono = `5521${numero.slice(5)}`;
    const primeiro = await s.criarSistema('mensageiro', { numero });
    const antes = await ConfigSystem.count();
    for (const outro of [numero, `+${semNono.slice(0, 2)} (${semNono.slice(2, 4)}) ${semNono.slice(4)}`]) {
      const p = esperarProblema(await s.api.post('/config_system', { token: admin, body: { tipo: 'mensageiro', nome: 'Outro', numero: outro } }), 409);
      expect(p.errors).toEqual([expect.objectContaining({ campo: 'numero' })]);
    }
    // given by a change too; another type may carry it, and the system itself keeps it
    const segundo = await s.criarSistema('mensageiro', { numero: `5521${String(Date.now() + 1).slice(-8)}` });
    esperarProblema(await s.api.patch(`/config_system/${segundo.id}`, { token: admin, body: { numero } }), 409);
    expect((await ConfigSystem.findByPk(segundo.id))!.numero).toBe(segundo.numero);
    // input that is wrong in itself is told first (DESIGN §10: 400 before 409)
    const p = esperarProblema(await s.api.patch(`/config_system/${segundo.id}`, { token: admin, body: { numero, segredo_hmac: 'segredo-do-mensageiro' } }), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'segredo_hmac' })]);
    expect((await s.api.patch(`/config_system/${primeiro.id}`, { token: admin, body: { numero, nome: 'Mesmo número' } })).status).toBe(200);
    // systems that shared a number before the rule: the whole record sent again is not refused
    const base = Number(String(Date.now()).slice(-8));
    const repetidos = [await s.criarSistema('mensageiro', { numero: `5541${base}` }), await s.criarSistema('mensageiro', { numero: `5541${base + 1}` })];
    await ConfigSystem.update({ numero: repetidos[0].numero }, { where: { id: repetidos[1].id } });
    expect((await s.api.patch(`/config_system/${repetidos[1].id}`, { token: admin, body: { nome: 'Inteiro de novo', numero: repetidos[0].numero } })).status).toBe(200);
    expect(await ConfigSystem.count()).toBe(antes + 3);
    // two at once: one is stored
    const deDois = `5531${String(Date.now()).slice(-8)}`;
    const juntos = await Promise.all([1, 2].map(() => s.api.post('/config_system', { token: admin, body: { tipo: 'mensageiro', nome: 'Junto', numero: deDois } })));
    expect(juntos.map((r) => r.status).sort()).toEqual([201, 409]);
    expect((await s.api.del(`/config_system/${primeiro.id}`, { token: admin })).status).toBe(204);
    expect((await s.api.patch(`/config_system/${segundo.id}`, { token: admin, body: { numero } })).status).toBe(200);
  });

  it('bad input answers 400 naming the field and creates nothing', async () => {
    const antes = await ConfigSystem.count();
    const casos: [Record<string, unknown>, string][] = [
      [{ nome: 'sem tipo' }, 'tipo'],
      [{ tipo: 'email', nome: 'x' }, 'tipo'],
      [{ tipo: 'suporte' }, 'nome'],
      [{ tipo: 'suporte', nome: 'x', url: 'ftp://chat.test' }, 'url'],
      // the API's paths are appended to the address: a query, a fragment or credentials would make every call miss
      [{ tipo: 'suporte', nome: 'x', url: 'https://chat.test/?conta=1' }, 'url'],
      [{ tipo: 'suporte', nome: 'x', url: 'https://chat.test/#painel' }, 'url'],
      [{ tipo: 'suporte', nome: 'x', url: 'https://usuario:senha@chat.test' }, 'url'],
      [{ tipo: 'suporte', nome: 'x', token: 'curto' }, 'token'],
      [{ tipo: 'suporte', nome: 'x', conta_id: -1 }, 'conta_id'],
      [{ tipo: 'suporte', nome: 'x', conta_id: '7' }, 'conta_id'],
      [{ tipo: 'suporte', nome: 'x', ativo: 'true' }, 'ativo'],
      [{ tipo: 'mensageiro', nome: 'x', numero: '12-34' }, 'numero'],
      [{ tipo: 'suporte', nome: 'x', outro: 1 }, 'outro'],
      // secrets are limited to 500 bytes, which their encrypted column holds (251 characters, 502 bytes)
      [{ tipo: 'suporte', nome: 'x', token_api: 'x'.repeat(501) }, 'token_api'],
      [{ tipo: 'suporte', nome: 'x', segredo_hmac: 'ç'.repeat(251) }, 'segredo_hmac'],
      // the API token goes in a header: what a header cannot carry would fail every call to the platform
      [{ tipo: 'suporte', nome: 'x', token_api: 'abc\ndef' }, 'token_api'],
      [{ tipo: 'suporte', nome: 'x', token_api: 'abc def' }, 'token_api'],
      [{ tipo: 'suporte', nome: 'x', token_api: 'tokén' }, 'token_api'],
    ];
    for (const [body, campo] of casos) {
      const p = esperarProblema(await s.api.post('/config_system', { token: admin, body }), 400);
      expect(p.errors.map((e: any) => e.campo)).toContain(campo);
    }
    // no address at all, or one no URL parser reads (a port past 65535): one error for the field, in the suite's words
    for (const url of ['chat.test', 'https://chat.test:70000']) {
      const p = esperarProblema(await s.api.post('/config_system', { token: admin, body: { tipo: 'suporte', nome: 'x', url } }), 400);
      expect(p.errors).toEqual([{ campo: 'url', mensagem: expect.stringContaining('uri') }]);
    }
    expect(await ConfigSystem.count()).toBe(antes);
  });

  it('only a master administers systems (403, nothing stored); no token 401', async () => {
    const { token } = await s.pessoa({ permissoes: { clientes: ['ler', 'criar', 'editar', 'deletar'] } });
    const antes = await ConfigSystem.count({ paranoid: false });
    esperarProblema(await s.api.post('/config_system', { token, body: { tipo: 'suporte', nome: 'x' } }), 403);
    esperarProblema(await s.api.get('/config_system', { token }), 403);
    esperarProblema(await s.api.get('/config_system'), 401);
    const c = await s.criarSistema('suporte', { url: 'https://so-do-master.test' });
    const guardado = (await ConfigSystem.findByPk(c.id))!.get({ plain: true });
    esperarProblema(await s.api.get(`/config_system/${c.id}`, { token }), 403);
    esperarProblema(await s.api.patch(`/config_system/${c.id}`, { token, body: { nome: 'x', renovar_token: true } }), 403);
    esperarProblema(await s.api.del(`/config_system/${c.id}`, { token }), 403);
    expect((await ConfigSystem.findByPk(c.id))!.get({ plain: true })).toEqual(guardado);
    expect(await ConfigSystem.count({ paranoid: false })).toBe(antes + 1);
  });

  it("a master demoted in identity writes no system with the token issued before (its webhook token would outlive the token's 8 hours); reading still goes by the token", async () => {
    const identity = identityDe(suite.url.identity);
    const { usuario, token } = await identity.criarUsuarioLogado({ e_master: true });
    const c = await s.criarSistema('suporte', { url: 'https://rebaixado.test' });
    const criar = () => s.api.post('/config_system', { token, body: { tipo: 'suporte', nome: unico('Sistema') } });
    expect((await criar()).status).toBe(201);
    expect((await identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    const antes = await ConfigSystem.count();
    esperarProblema(await criar(), 403);
    esperarProblema(await s.api.patch(`/config_system/${c.id}`, { token, body: { renovar_token: true } }), 403);
    esperarProblema(await s.api.del(`/config_system/${c.id}`, { token }), 403);
    expect(await ConfigSystem.count()).toBe(antes);
    // the webhook still takes the token it had
    expect((await s.registrar(c, eventoDeMensagem({ conversa: idDoSuporte() }))).conversa_id).toEqual(expect.any(String));
    expect((await s.api.get(`/config_system/${c.id}`, { token })).status).toBe(200);
  });

  it('PATCH changes what is sent (null clears a secret); DELETE hides it; an unknown id answers 404', async () => {
    const c = await s.criarSistema('suporte', { segredo_hmac: 'segredo-a', url: 'https://a.test' });
    const r = await s.api.patch(`/config_system/${c.id}`, { token: admin, body: { nome: 'Novo nome', segredo_hmac: null } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ nome: 'Novo nome', url: 'https://a.test', tem_segredo_hmac: false });
    expect(r.body.token).toBeUndefined();
    esperarProblema(await s.api.patch(`/config_system/${c.id}`, { token: admin, body: { tipo: 'gateway' } }), 400);
    const comConsulta = esperarProblema(await s.api.patch(`/config_system/${c.id}`, { token: admin, body: { url: 'https://b.test?x=1', token_api: 't' } }), 400);
    expect(comConsulta.errors).toEqual([expect.objectContaining({ campo: 'url', mensagem: expect.stringContaining('endereço base') })]);
    expect((await ConfigSystem.findByPk(c.id))!).toMatchObject({ tipo: 'suporte', url: 'https://a.test' });
    // a platform served under a path is a base address too
    const r2 = await s.api.patch(`/config_system/${c.id}`, { token: admin, body: { url: 'https://b.test/chat/', token_api: 't' } });
    expect(r2.body).toMatchObject({ url: 'https://b.test/chat' });
    expect((await s.api.del(`/config_system/${c.id}`, { token: admin })).status).toBe(204);
    esperarProblema(await s.api.get(`/config_system/${c.id}`, { token: admin }), 404);
    esperarProblema(await s.api.patch(`/config_system/${c.id}`, { token: admin, body: { nome: 'x' } }), 404);
  });

  it('a new url needs the API token sent again (the stored one would go to the new address): 400 naming token_api, nothing changes; with it, or with null, it applies', async () => {
    const c = await s.criarSistema('suporte', { url: 'https://chat.loja.test', conta_id: 1, token_api: 'token-da-loja' });
    const mudar = (body: Record<string, unknown>) => s.api.patch(`/config_system/${c.id}`, { token: admin, body });
    const antes = (await ConfigSystem.findByPk(c.id))!.get({ plain: true });
    const p = esperarProblema(await mudar({ url: 'https://outro.test', nome: 'Outro' }), 400);
    expect(p.errors).toEqual([expect.objectContaining({ campo: 'token_api' })]);
    expect((await ConfigSystem.findByPk(c.id))!.get({ plain: true })).toEqual(antes);
    // the same address (a trailing slash is no change) and other fields need nothing
    expect((await mudar({ url: 'https://chat.loja.test/', nome: 'Loja' })).body).toMatchObject({ url: 'https://chat.loja.test', tem_token_api: true });
    expect((await mudar({ url: 'https://novo.test', token_api: 'token-novo' })).body).toMatchObject({ url: 'https://novo.test', tem_token_api: true });
    expect((await mudar({ url: 'https://sem-token.test', token_api: null })).body).toMatchObject({ url: 'https://sem-token.test', tem_token_api: false });
    // with no token stored there is nothing to carry away
    expect((await mudar({ url: 'https://livre.test' })).body).toMatchObject({ url: 'https://livre.test', tem_token_api: false });
    // no address sends the token nowhere; the next address needs it again
    expect((await mudar({ token_api: 'token-guardado' })).body).toMatchObject({ tem_token_api: true });
    expect((await mudar({ url: null })).body).toMatchObject({ url: null, tem_token_api: true });
    esperarProblema(await mudar({ url: 'https://depois.test' }), 400);
  });

  it('a change (a new token) or a second deletion arriving while a deletion is under way answers 404 and leaves the deleted system as it was', async () => {
    const c = await s.criarSistema('suporte', { url: 'https://corrida.test' });
    const tokenAntes = Buffer.from((await ConfigSystem.findByPk(c.id))!.token_hash);
    const conexao = await novaConexao('sales');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('UPDATE config_system SET deletado_em = NOW(3) WHERE id = ?', [c.id]);
      const mudanca = s.api.patch(`/config_system/${c.id}`, { token: admin, body: { nome: 'depois', renovar_token: true } });
      const remocao = s.api.del(`/config_system/${c.id}`, { token: admin });
      await esperarOutraConexao(conexao, 'both waiting on the system', ['%FROM `config_system`%FOR UPDATE%'], 2);
      await conexao.query('COMMIT');
      esperarProblema(await mudanca, 404);
      esperarProblema(await remocao, 404);
      const [[linha]] = (await conexao.query('SELECT nome, token_hash FROM config_system WHERE id = ?', [c.id])) as any;
      expect({ nome: linha.nome, mesmoToken: Buffer.from(linha.token_hash).equals(tokenAntes) }).toEqual({ nome: c.nome, mesmoToken: true });
    } finally {
      await conexao.end();
    }
  });
});

describe.each([
  ['cliente', 'razao_social', () => ({ cnpj: '11222333000181', telefone: '+55 11 3333-4444', email: 'compras@cliente.test' })],
  // each robot answers as chat identities of its own (no two live robots share one)
  ['robo', 'nome', () => ({ descricao: 'Atende vendas', suporte_usuario_id: idDoSuporte(), suporte_bot_id: idDoSuporte() })],
] as const)('the %s records conversations link to (area clientes)', (recurso, campoDoNome, novosExtras) => {
  it('create, read, page alphabetically with a search, update and delete', async () => {
    const tag = unico('Cad');
    const nomes = [`${tag} Beta`, `${tag} alfa`, `${tag} Gama`];
    const extras = novosExtras();
    const criados = [await s.criar(recurso, { [campoDoNome]: nomes[0], ...extras })];
    for (const nome of nomes.slice(1)) criados.push(await s.criar(recurso, { [campoDoNome]: nome, ...novosExtras() }));
    expect(criados[0]).toMatchObject({ id: expect.any(String), [campoDoNome]: `${tag} Beta`, ...extras, criado_em: expect.stringMatching(RFC3339) });

    const pagina = await s.api.get(`/${recurso}`, { token: admin, query: { busca: tag.toLowerCase(), tamanho: 2 } });
    expect(pagina.body).toMatchObject({ pagina: 1, tamanho: 2, total: 3 });
    expect(pagina.body.itens.map((i: any) => i[campoDoNome])).toEqual([`${tag} alfa`, `${tag} Beta`]);

    const alterado = await s.api.patch(`/${recurso}/${criados[0].id}`, { token: admin, body: { [campoDoNome]: `${tag} Delta` } });
    expect(alterado.body).toMatchObject({ [campoDoNome]: `${tag} Delta`, ...extras });
    expect((await s.api.get(`/${recurso}/${criados[0].id}`, { token: admin })).body[campoDoNome]).toBe(`${tag} Delta`);

    expect((await s.api.del(`/${recurso}/${criados[1].id}`, { token: admin })).status).toBe(204);
    esperarProblema(await s.api.get(`/${recurso}/${criados[1].id}`, { token: admin }), 404);
    expect((await s.api.get(`/${recurso}`, { token: admin, query: { busca: tag } })).body.total).toBe(2);

    // accented text is searched too (a CNPJ column holds ASCII only, and is then left out of the search)
    const acentuado = await s.criar(recurso, { [campoDoNome]: `${tag} Comércio São João`, ...novosExtras() });
    const busca = await s.api.get(`/${recurso}`, { token: admin, query: { busca: 'ércio são' } });
    expect(busca.status).toBe(200);
    expect(busca.body.itens.map((i: any) => i.id)).toContain(acentuado.id);
  });

  it('a change or a second deletion arriving while a deletion is under way answers 404 and leaves the deleted record as it was', async () => {
    const tag = unico('Corrida');
    const registro = await s.criar(recurso, { [campoDoNome]: tag, ...novosExtras() });
    const conexao = await novaConexao('sales');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query(`UPDATE ${recurso} SET deletado_em = NOW(3) WHERE id = ?`, [registro.id]);
      const mudanca = s.api.patch(`/${recurso}/${registro.id}`, { token: admin, body: { [campoDoNome]: `${tag} depois` } });
      const remocao = s.api.del(`/${recurso}/${registro.id}`, { token: admin });
      await esperarOutraConexao(conexao, 'both waiting on the record', [`%FROM \`${recurso}\`%FOR UPDATE%`, `UPDATE \`${recurso}\`%`], 2);
      await conexao.query('COMMIT');
      esperarProblema(await mudanca, 404);
      esperarProblema(await remocao, 404);
      const [[linha]] = (await conexao.query(`SELECT ${campoDoNome} AS nome FROM ${recurso} WHERE id = ?`, [registro.id])) as any;
      expect(linha.nome).toBe(tag);
    } finally {
      await conexao.end();
    }
  });

  it('bad input 400; a reader cannot write (403); without the area 403; nothing refused is stored', async () => {
    const linhas = async () => Number(((await banco('sales').query(`SELECT COUNT(*) AS n FROM ${recurso}`, { type: QueryTypes.SELECT })) as { n: number }[])[0].n);
    const antes = await linhas();
    esperarProblema(await s.api.post(`/${recurso}`, { token: admin, body: {} }), 400);
    esperarProblema(await s.api.post(`/${recurso}`, { token: admin, body: { [campoDoNome]: 'x', desconhecido: true } }), 400);
    const existente = await s.criar(recurso, { [campoDoNome]: unico('Intocado'), ...novosExtras() });
    const leitor = await s.pessoa({ permissoes: { clientes: ['ler'] } });
    expect((await s.api.get(`/${recurso}`, { token: leitor.token })).status).toBe(200);
    esperarProblema(await s.api.post(`/${recurso}`, { token: leitor.token, body: { [campoDoNome]: 'x' } }), 403);
    esperarProblema(await s.api.patch(`/${recurso}/${existente.id}`, { token: leitor.token, body: { [campoDoNome]: 'x' } }), 403);
    esperarProblema(await s.api.del(`/${recurso}/${existente.id}`, { token: leitor.token }), 403);
    const semArea = await s.pessoa({ permissoes: null });
    esperarProblema(await s.api.get(`/${recurso}`, { token: semArea.token }), 403);
    // an id never created: 404 to a change and to a deletion
    esperarProblema(await s.api.patch(`/${recurso}/${randomUUID()}`, { token: admin, body: { [campoDoNome]: 'x' } }), 404);
    esperarProblema(await s.api.del(`/${recurso}/${randomUUID()}`, { token: admin }), 404);
    expect((await s.api.get(`/${recurso}/${existente.id}`, { token: admin })).body).toEqual(existente);
    expect(await linhas()).toBe(antes + 1);
  });
});

describe("a robot's chat identities: each belongs to one live robot", () => {
  const robo = (campos: Record<string, unknown>) => s.criar('robo', { nome: unico('Robô '), ...campos });
  const postar = (body: Record<string, unknown>) => s.api.post('/robo', { token: admin, body });
  const mudar = (id: string, body: Record<string, unknown>) => s.api.patch(`/robo/${id}`, { token: admin, body });
  /** a 409 naming the field, in its detail and in errors */
  const recusado = (res: Parameters<typeof esperarProblema>[0], campo: string) => {
    const p = esperarProblema(res, 409);
    expect(p).toMatchObject({ code: 'conflito', errors: [{ campo, mensagem: p.detail }] });
  };
  const guardados = (nome: string) => Robo.count({ where: { nome }, paranoid: false });

  it('POST with a user or agent bot another live robot answers as: 409 naming the field, nothing stored', async () => {
    const dono = await robo({ suporte_usuario_id: idDoSuporte(), suporte_bot_id: idDoSuporte() });
    for (const campo of ['suporte_usuario_id', 'suporte_bot_id'] as const) {
      const nome = unico('Repetido ');
      recusado(await postar({ nome, [campo]: dono[campo] }), campo);
      expect(await guardados(nome)).toBe(0);
    }
  });

  it('PATCH giving a robot an identity another live robot holds: 409 naming the field, the robot unchanged', async () => {
    const dono = await robo({ suporte_usuario_id: idDoSuporte(), suporte_bot_id: idDoSuporte() });
    const r = await robo({ descricao: 'Antes', suporte_usuario_id: idDoSuporte() });
    for (const campo of ['suporte_usuario_id', 'suporte_bot_id'] as const) {
      recusado(await mudar(r.id, { nome: unico('Depois '), descricao: 'Depois', [campo]: dono[campo] }), campo);
      expect((await s.api.get(`/robo/${r.id}`, { token: admin })).body).toEqual(r);
    }
    // its own identity sent back is no conflict
    expect((await mudar(r.id, { descricao: 'Depois', suporte_usuario_id: r.suporte_usuario_id })).status).toBe(200);
  });

  it("the two kinds of id are counted apart: one robot's user and another's agent bot may share a number", async () => {
    const numero = idDoSuporte();
    expect((await robo({ suporte_usuario_id: numero })).suporte_usuario_id).toBe(numero);
    expect((await robo({ suporte_bot_id: numero })).suporte_bot_id).toBe(numero);
    const outro = idDoSuporte();
    expect(await robo({ suporte_usuario_id: outro, suporte_bot_id: outro })).toMatchObject({ suporte_usuario_id: outro, suporte_bot_id: outro });
    // within one kind the number is taken
    recusado(await postar({ nome: unico('Terceiro '), suporte_usuario_id: numero }), 'suporte_usuario_id');
    recusado(await postar({ nome: unico('Terceiro '), suporte_bot_id: numero }), 'suporte_bot_id');
  });

  it("a deleted robot's identities can be given to another robot", async () => {
    const [usuario, bot] = [idDoSuporte(), idDoSuporte()];
    const antigo = await robo({ suporte_usuario_id: usuario, suporte_bot_id: bot });
    recusado(await postar({ nome: unico('Cedo '), suporte_usuario_id: usuario }), 'suporte_usuario_id');
    expect((await s.api.del(`/robo/${antigo.id}`, { token: admin })).status).toBe(204);

    const novo = await robo({ suporte_usuario_id: usuario });
    const mudado = await robo({});
    expect((await mudar(mudado.id, { suporte_bot_id: bot })).body.suporte_bot_id).toBe(bot);
    // theirs now; and deleted too, two deleted robots may have held one identity
    recusado(await postar({ nome: unico('Tarde '), suporte_usuario_id: usuario }), 'suporte_usuario_id');
    expect((await s.api.del(`/robo/${novo.id}`, { token: admin })).status).toBe(204);
    expect((await robo({ suporte_usuario_id: usuario })).suporte_usuario_id).toBe(usuario);
  });

  it('an identity given at the same moment by another write: the create waits for it and answers 409 once it is committed', async () => {
    const bot = idDoSuporte();
    const nome = unico('Concorrente ');
    const conexao = await novaConexao('sales');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query("INSERT INTO robo (id, nome, suporte_bot_id, criado_em, atualizado_em) VALUES (UUID(), 'Outra escrita', ?, NOW(3), NOW(3))", [bot]);
      const criacao = postar({ nome, suporte_bot_id: bot });
      // a check read before the write would see nothing yet: the unique key makes the create wait
      await esperarOutraConexao(conexao, 'the create waiting on the unique key', ['INSERT INTO `robo`%']);
      await conexao.query('COMMIT');
      recusado(await criacao, 'suporte_bot_id');
      expect(await guardados(nome)).toBe(0);
    } finally {
      await conexao.end();
    }
  });

  it('the OpenAPI document lists the 409 of POST /robo and PATCH /robo/{id}', async () => {
    const { paths } = (await s.api.get('/openapi.json')).body;
    expect(paths['/robo'].post.responses['409']).toBeDefined();
    expect(paths['/robo/{id}'].patch.responses['409']).toBeDefined();
  });
});

describe('a customer\'s fields', () => {
  it('a CNPJ is taken as leads takes one: 14 digits or letters, with or without the mask, stored upper case without it; wrong check digits are a 400 that stores nothing; an e-mail is checked by syntax', async () => {
    expect((await s.criar('cliente', { razao_social: 'Alfa', cnpj: '12abc34501de35' })).cnpj).toBe('12ABC34501DE35');
    expect((await s.criar('cliente', { razao_social: 'Beta', cnpj: '11.222.333/0001-81' })).cnpj).toBe('11222333000181');
    const antes = (await s.api.get('/cliente', { token: admin, query: { tamanho: 1 } })).body.total;
    for (const errado of ['123', '12ABC34501DE36', '11.222.333/0001-82', '00000000000000']) {
      const r = await s.api.post('/cliente', { token: admin, body: { razao_social: 'x', cnpj: errado } });
      esperarProblema(r, 400);
      expect([errado, JSON.stringify(r.body)]).toEqual([errado, expect.stringMatching(/CNPJ/)]);
    }
    esperarProblema(await s.api.post('/cliente', { token: admin, body: { razao_social: 'x', email: 'não é e-mail' } }), 400);
    expect((await s.api.get('/cliente', { token: admin, query: { tamanho: 1 } })).body.total).toBe(antes);
    // by its syntax only (DESIGN §10): a domain of one label is an address too
    expect((await s.criar('cliente', { razao_social: 'Interna', email: 'compras@intranet' })).email).toBe('compras@intranet');
  });

  it('the search finds a CNPJ as a person types it: any case, with or without its mask', async () => {
    const base = `9${Math.random().toString(36).slice(2, 7).toUpperCase()}`.padEnd(12, 'A');
    const cnpj = `${base}${digitosVerificadores(base)}`;
    const c = await s.criar('cliente', { razao_social: unico('Com CNPJ'), cnpj: cnpj.toLowerCase() });
    const mascarado = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
    for (const busca of [cnpj.slice(0, 6).toLowerCase(), cnpj.slice(0, 6), mascarado.toLowerCase(), mascarado.slice(0, 7)]) {
      const r = await s.api.get('/cliente', { token: admin, query: { busca } });
      expect([busca, r.body.itens.map((i: any) => i.id)]).toEqual([busca, [c.id]]);
    }
  });
});
