import { banco } from '../../lib/database';
import { AplicativoDeTeste, ESQUEMA, hubNesteArquivo, marca } from './apoio-entregas';

/**
 * The suite's ids are lower-case UUIDs, and many clients write them in capitals. Such an id finds
 * its row and is stored in lower case: stored as sent, the hub's own comparisons (owner of a type,
 * the version of a subscription, the counts per application) would take it for another id.
 */
const t = hubNesteArquivo({ entregas: false });

async function tipoComDono(donoId: string) {
  const res = await t.hub.api.post('/tipo_de_evento', { token: await t.hub.admin(), body: { nome: `maiusc.${marca()}.evento`, aplicativo_id: donoId } });
  expect(res.status).toBe(201);
  return res.body as { id: string; nome: string; aplicativo_id: string };
}

const guardado = async (sql: string, id: string) => ((await banco('hub').query(sql, { replacements: [id], plain: true })) as { v: string }).v;

describe('an owner application id written in capitals', () => {
  let publicador: AplicativoDeTeste;
  let tipo: { id: string; nome: string; aplicativo_id: string };
  beforeAll(async () => {
    publicador = await t.hub.aplicativo();
    tipo = await tipoComDono(publicador.hub.id.toUpperCase());
    await t.hub.versao(tipo.id, ESQUEMA);
  });

  test('is stored and answered in lower case', async () => {
    expect(tipo.aplicativo_id).toBe(publicador.hub.id);
    expect(await guardado('SELECT aplicativo_id AS v FROM tipo_de_evento WHERE id = ?', tipo.id)).toBe(publicador.hub.id);
  });

  test('leaves the owner able to publish its type (DESIGN §10)', async () => {
    expect((await t.hub.publicar(publicador, { tipo: tipo.nome, dados: { n: 1 } })).status).toBe(202);
  });

  test('leaves the application routes answering, with the type counted (SPEC 4.4)', async () => {
    const token = await t.hub.admin();
    const porId = await t.hub.api.get(`/aplicativo/${publicador.hub.id}`, { token });
    expect(porId.status).toBe(200);
    expect(porId.body.quantidade_de_tipos_de_evento).toBe(1);
    expect((await t.hub.api.get('/aplicativo/filtro', { token })).status).toBe(200);
    expect((await t.hub.api.get('/aplicativo', { token })).status).toBe(200);
  });
});

describe('an event type id written in capitals', () => {
  test('in a subscription: the subscription gets each event of its version and shows the version situation (SPEC §6 rule 2, 4.3 rule 5)', async () => {
    const [publicador, assinante] = await t.hub.aplicativos(`Pub ${marca()}`, `Ass ${marca()}`);
    const tipo = await t.hub.tipo(publicador);
    const res = await t.hub.api.post('/assinatura', {
      token: await t.hub.admin(),
      body: { aplicativo_assinante_id: assinante.hub.id.toUpperCase(), tipo_de_evento_id: tipo.id.toUpperCase(), versao_do_esquema: 1, url_de_destino: t.receptor.url('/x') },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ tipo_de_evento_id: tipo.id, aplicativo_assinante_id: assinante.hub.id, situacao_da_versao: 'ativa' });
    const pub = await t.hub.publicar(publicador, { tipo: tipo.nome, dados: { n: 1 } });
    expect(pub.status).toBe(202);
    expect(pub.body.entregas).toBe(1);
  });

  test('in a new version\'s path: the version belongs to the type as the subscriptions to it see it (SPEC 4.3 rule 5)', async () => {
    const [publicador, assinante] = await t.hub.aplicativos(`Pub ${marca()}`, `Ass ${marca()}`);
    const tipo = await tipoComDono(publicador.hub.id);
    await t.hub.versao(tipo.id.toUpperCase(), ESQUEMA);
    expect(await guardado('SELECT tipo_de_evento_id AS v FROM versao_de_evento WHERE tipo_de_evento_id = ? LIMIT 1', tipo.id)).toBe(tipo.id);
    expect((await t.hub.assinar(assinante, tipo.id, { url_de_destino: t.receptor.url('/y') })).situacao_da_versao).toBe('ativa');
  });
});
