import nock from 'nock';
import { novaConexao } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { dormir, esperarAte, hubDe, iniciarReceptor, Receptor } from './apoio-entregas';

/**
 * An attempt still in flight when the hub's grace period ends (SHUTDOWN_GRACE_MS, 2 s in the
 * tests) has its connection closed by the hub. Deliveries go over kept-alive connections, and a
 * kept one closed under a request is also what a subscriber closing an idle connection looks like:
 * that case is sent again at once, this one must not be (the subscriber is handling it), nor be
 * recorded as the subscriber's failed attempt.
 */

// nock's interception makes a new connection per request; on loopback node's own http runs, reusing
// kept-alive connections as in production
nock.restore();

let suite: SuiteDeTeste;
let receptor: Receptor;
afterAll(async () => {
  await receptor?.fechar();
  await suite?.encerrar();
});

test('an attempt cut by the shutdown is neither sent again at once nor counted as a failed attempt of the subscriber', async () => {
  suite = await iniciarSuite(['identity', 'hub'], { env: { HUB_RETRY_SCHEDULE_MS: '60000' } });
  const hub = hubDe(suite);
  receptor = await iniciarReceptor((r) => (r.corpo?.dados?.n === 2 ? { status: 200, atrasoMs: 4000 } : 200));
  const c = await hub.cenario({ url_de_destino: receptor.url('/w'), tempo_limite_em_segundos: 10 });
  await c.publicar({ n: 1 });
  await esperarAte(async () => receptor.recebidas.length === 1, 'the first delivery (a kept-alive connection to reuse)');
  await c.publicar({ n: 2 });
  const segunda = await esperarAte(async () => receptor.recebidas.find((r) => r.corpo?.dados?.n === 2), 'the second delivery in flight');
  expect(segunda.cabecalhos.connection).not.toBe('close');

  await encerrar();
  await dormir(1000);
  expect(receptor.de(segunda.webhookId)).toHaveLength(1);
  const conexao = await novaConexao('hub');
  try {
    const [entregas] = await conexao.query('SELECT situacao, tentativas FROM entrega WHERE id = ?', [segunda.webhookId]);
    expect(entregas).toEqual([{ situacao: 'pendente', tentativas: 0 }]);
    const [tentativas] = await conexao.query('SELECT COUNT(*) AS n FROM tentativa_de_entrega WHERE entrega_id = ?', [segunda.webhookId]);
    expect(tentativas).toEqual([{ n: 0 }]);
  } finally {
    await conexao.end();
  }
}, 60_000);
