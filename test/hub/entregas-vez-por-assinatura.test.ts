import { assinaturasComVez } from '../../api/hub/entregas';
import { banco } from '../../lib/database';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { esperarAte, hubDe, Hub, iniciarReceptor, marca, Receptor } from './apoio-entregas';

/**
 * A worker's slots (HUB_ENTREGA_CONCORRENCIA, 4 here) are shared by every subscription, and a
 * subscription whose answers take a second or more takes at most HUB_ENTREGA_POR_ASSINATURA (2
 * here) of them while other attempts wait for one: a subscriber that answers no sooner than its time-out does not hold up the
 * others' deliveries, while one that answers fast keeps every slot (a burst to it is no slower).
 */
let suite: SuiteDeTeste;
let hub: Hub;
let receptor: Receptor;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub'], { env: { HUB_ENTREGA_CONCORRENCIA: '4', HUB_ENTREGA_POR_ASSINATURA: '2' } });
  hub = hubDe(suite);
  receptor = await iniciarReceptor((r) => (r.caminho === '/lento' ? { status: 200, atrasoMs: 5000 } : 200));
});
afterAll(async () => {
  await receptor?.fechar();
  await suite?.encerrar();
});

test("a subscriber that answers only past its time-out takes two of the worker's four slots while others wait: another subscription's deliveries go out at once, and every slow one still ends, with its one attempt", async () => {
  const EVENTOS = 20;
  const [publicador, lento, rapido] = await hub.aplicativos(`P ${marca()}`, `L ${marca()}`, `R ${marca()}`);
  const tipo = await hub.tipo(publicador);
  const doLento = await hub.assinar(lento, tipo.id, { url_de_destino: receptor.url('/lento'), tempo_limite_em_segundos: 2, maximo_de_tentativas: 1 });
  const doRapido = await hub.assinar(rapido, tipo.id, { url_de_destino: receptor.url('/rapido') });
  for (let n = 0; n < EVENTOS; n++) expect((await hub.publicar(publicador, { tipo: tipo.nome, dados: { n } })).status).toBe(202);
  const publicado = Date.now();
  const rapidas = () => receptor.recebidas.filter((r) => r.caminho === '/rapido');
  await esperarAte(() => rapidas().length >= EVENTOS, 'the fast subscriber had every event', 30_000);
  // the slow subscriber's first calls take every slot until their 2 s time-out tells it is slow;
  // then it keeps two, and the fast one's come at once (in every slot, they came in steps of 2 s, the
  // last about 10 s after)
  expect(Math.max(...rapidas().map((r) => r.em)) - publicado).toBeLessThan(4_500);
  expect(new Set(rapidas().map((r) => r.webhookId)).size).toBe(EVENTOS);
  // the slow ones put off meanwhile say when they come back: the sweep does not take them for lost
  const [[{ adiadas }]] = (await banco('hub').query(
    `SELECT COUNT(*) AS adiadas FROM entrega WHERE assinatura_id = ? AND situacao = 'pendente' AND tentativas = 0 AND proxima_tentativa_em > NOW(3)`,
    { replacements: [doLento.id] },
  )) as [[{ adiadas: number }], unknown];
  expect(Number(adiadas)).toBeGreaterThan(0);

  // the slow one's, put off for their turn, each end after its one attempt: none lost, none sent twice
  const total = async (situacao: string) => (await hub.entregas({ assinatura_id: doLento.id, situacao, tamanho: 1 })).total;
  await esperarAte(async () => (await total('fila_de_erro')) === EVENTOS, 'every slow delivery in the error queue', 90_000);
  expect(await total('pendente')).toBe(0);
  const lentas = receptor.recebidas.filter((r) => r.caminho === '/lento');
  expect(lentas).toHaveLength(EVENTOS);
  expect(new Set(lentas.map((r) => r.webhookId)).size).toBe(EVENTOS);

  // idle, the fast subscription's timing is forgotten (a long-running worker sees thousands come and
  // go); the slow one's average is kept, so its next burst is capped from the start
  expect(assinaturasComVez()).toContain(doLento.id);
  expect(assinaturasComVez()).not.toContain(doRapido.id);
}, 120_000);
