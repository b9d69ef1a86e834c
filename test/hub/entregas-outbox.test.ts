import { createRemoteJWKSet, jwtVerify } from 'jose';
import { config } from '../../config';
import { Evento } from '../../models/hub';
import { Aplicativo as AplicativoDoIdentity, EventoPendente } from '../../models/identity';
import { esperarAte, hubNesteArquivo } from './apoio-entregas';

/**
 * The identity outbox lands at the hub (DESIGN §3 and §10 Hub): the hub creates colaborador.criado,
 * colaborador.atualizado and colaborador.removido (version 1, owned by the identity application)
 * when that application first appears; a change of a `colaborador` user is published by identity
 * with its own application token and reaches every subscriber of the type, signed like any other.
 * Identity and hub both run here, each with its workers.
 */

const t = hubNesteArquivo();

async function tiposDoColaborador() {
  const res = await t.hub.api.get('/tipo_de_evento', { token: await t.hub.admin(), query: { tamanho: 100 } });
  expect(res.status).toBe(200);
  return (res.body.itens as any[]).filter((t) => t.nome.startsWith('colaborador.'));
}

// first in the file: the hub has not listed its applications yet, so it knows neither identity nor its types
test('an event of a change made before the hub synced its applications is accepted without anyone listing them: an application the hub does not know makes it sync (DESIGN §3 outbox)', async () => {
  const usuario = await t.hub.identity.criarUsuario({ perfil: 'colaborador' });
  const enviado = await esperarAte(async () => {
    const e = (await EventoPendente.findAll()).find((x) => x.dados.id === usuario.id);
    return e?.enviado_em && e;
  }, 'the event accepted by the hub', 20_000);
  // at its first attempt, as a rule; a later one when the sync outlasts HUB_ESPERA_SYNC_MS (a busy
  // machine). Before, it was refused until a master listed the hub's applications.
  expect(enviado.ultimo_erro).toBeNull();
  expect(await Evento.count({ where: { id_do_publicador: enviado.id } })).toBe(1);
  expect(await tiposDoColaborador()).toHaveLength(3);
}, 30_000);

test('a master listing creates the colaborador.* types, version 1, owned by the identity application (DESIGN §10)', async () => {
  const assinante = await t.hub.aplicativo();
  expect(assinante.hub.ativo).toBe(true);
  const tipos = await tiposDoColaborador();
  expect(tipos.map((t) => t.nome).sort()).toEqual(['colaborador.atualizado', 'colaborador.criado', 'colaborador.removido']);
  const dono = (await t.hub.api.get(`/aplicativo/${tipos[0].aplicativo_id}`, { token: await t.hub.admin() })).body;
  for (const t of tipos) {
    expect(t.aplicativo_id).toBe(dono.id);
    expect(t.versoes).toEqual([{ versao: 1, situacao: 'ativa', criada_em: expect.any(String) }]);
  }
  // the owner is the identity service's own application (its id at identity is the publisher's token sub)
  const doIdentity = await AplicativoDoIdentity.findOne({ where: { servico_da_suite: 'identity' } });
  expect(dono.identificador_no_auth).toBe(doIdentity!.id);
});

test('creating a colaborador user at identity delivers colaborador.criado to a subscriber of v1, with dados the user and the identity application as origin (DESIGN §3)', async () => {
  const assinante = await t.hub.aplicativo();
  const criado = (await tiposDoColaborador()).find((t) => t.nome === 'colaborador.criado');
  const dono = (await t.hub.api.get(`/aplicativo/${criado.aplicativo_id}`, { token: await t.hub.admin() })).body;
  const assinatura = await t.hub.assinar(assinante, criado.id, { url_de_destino: t.receptor.url('/colaboradores') });

  const usuario = await t.hub.identity.criarUsuario({ perfil: 'colaborador' });
  const r = await esperarAte(
    () => t.receptor.recebidas.find((x) => x.caminho === '/colaboradores' && x.corpo?.dados?.id === usuario.id),
    'the colaborador.criado delivery',
    20_000,
  );
  expect(r.corpo).toMatchObject({
    tipo: 'colaborador.criado',
    versao: 1,
    aplicativo_origem_id: dono.identificador_no_auth,
    aplicativo_assinante_id: assinante.id,
    dados: { id: usuario.id, email: usuario.email, nome: usuario.nome, perfil: 'colaborador' },
  });
  const { payload } = await jwtVerify(String(r.cabecalhos['webhook-token']), createRemoteJWKSet(new URL(`${t.suite.url.hub}/.well-known/jwks.json`)), {
    issuer: t.suite.url.hub,
    audience: assinante.id,
    typ: 'webhook+jwt',
  });
  expect(payload.sub).toBe(assinatura.id);
  const entrega = await t.hub.esperarSituacao(r.webhookId, 'entregue');
  expect(entrega.evento.dados.email).toBe(usuario.email);

  // a cliente user publishes nothing, and the event is delivered once
  await t.hub.identity.criarUsuario({ perfil: 'cliente' });
  const depois = await t.hub.identity.criarUsuario({ perfil: 'colaborador' });
  await esperarAte(() => t.receptor.recebidas.find((x) => x.corpo?.dados?.id === depois.id), 'the next colaborador.criado', 20_000);
  expect(t.receptor.recebidas.filter((x) => x.caminho === '/colaboradores').map((x) => x.corpo.dados.email)).toEqual([usuario.email, depois.email]);
});

// last in the file: identity publishes as another application from here on
test('identity given an application of its own anew (IDENTITY_CLIENT_ID), one the hub already knew: its first event refused as not the owner\'s syncs the applications, which pass the colaborador.* types to it, and it is accepted (DESIGN §10)', async () => {
  const antigo = (await tiposDoColaborador())[0].aplicativo_id;
  const novo = await t.hub.identity.criarAplicativo();
  // known to the hub before identity runs as it: its events start no sync as an unknown publisher's do
  await esperarAte(
    async () => (await t.hub.api.get('/aplicativo', { token: await t.hub.admin(), query: { tamanho: 1000 } })).body.itens.some((a: any) => a.identificador_no_auth === novo.client_id),
    'the new application listed by the hub',
    20_000,
  );
  // IDENTITY_CLIENT_ID as both services read it (config); a config reloaded would lose the suite's ports
  const servico = config().servicos.identity;
  const antes = { ...servico };
  Object.assign(servico, { clientId: novo.client_id, clientSecret: novo.client_secret });
  try {
    const usuario = await t.hub.identity.criarUsuario({ perfil: 'colaborador' });
    const enviado = await esperarAte(async () => {
      const e = (await EventoPendente.findAll()).find((x) => x.dados.id === usuario.id);
      return e?.enviado_em && e;
    }, 'the event accepted by the hub', 20_000);
    expect(await Evento.count({ where: { id_do_publicador: enviado.id } })).toBe(1);
    const tipos = await tiposDoColaborador();
    expect(tipos).toHaveLength(3);
    const dono = (await t.hub.api.get(`/aplicativo/${tipos[0].aplicativo_id}`, { token: await t.hub.admin() })).body;
    expect(dono.identificador_no_auth).toBe(novo.client_id);
    for (const tipo of tipos) expect(tipo.aplicativo_id).not.toBe(antigo);
  } finally {
    Object.assign(servico, antes);
  }
}, 30_000);

// after the test above (the types owned by an application identity no longer runs as)
test('an event of identity\'s new application refused as not the owner while the sync cannot conclude answers 503 with Retry-After and stores nothing; the same event sent again once it can is accepted, whatever the spelling of its type (DESIGN §10)', async () => {
  const outro = await t.hub.aplicativo();
  const servico = config().servicos.identity;
  const antes = { ...servico };
  const espera = config().hub.esperaSyncMs;
  // spelled otherwise (the lookup ignores case): the type's cache keeps the publisher's spelling
  const evento = { tipo: 'Colaborador.Criado', id: `o${Date.now()}`, dados: { id: 'u1', nome: 'Ana', email: 'ana@example.com', perfil: 'colaborador' } };
  Object.assign(servico, { clientId: outro.id });
  try {
    // a sync that outlasts the wait is one the publisher does not wait for (HUB_ESPERA_SYNC_MS)
    config().hub.esperaSyncMs = 1;
    const recusado = await t.hub.publicar(outro, evento);
    expect(recusado.status).toBe(503);
    expect(recusado.headers.get('content-type')).toContain('application/problem+json');
    expect(recusado.headers.get('retry-after')).toBe('5');
    expect(await Evento.count({ where: { id_do_publicador: evento.id } })).toBe(0);

    config().hub.esperaSyncMs = espera;
    const aceito = await t.hub.publicar(outro, evento);
    expect(aceito.status).toBe(202);
    expect(await Evento.count({ where: { id_do_publicador: evento.id } })).toBe(1);
    const tipos = await tiposDoColaborador();
    for (const tipo of tipos) expect(tipo.aplicativo_id).toBe(outro.hub.id);
  } finally {
    config().hub.esperaSyncMs = espera;
    Object.assign(servico, antes);
  }
}, 30_000);
