import { AddressInfo, createServer } from 'node:net';
import { decodeJwt } from 'jose';
import { config } from '../../config';
import { registrarSucessos, Sucesso } from '../../api/hub/entregas';
import { dataSql } from '../../lib/database';
import { Evento, TentativaDeEntrega } from '../../models/hub';
import { fila } from '../../queues/fila';
import { atrasoDaProximaTentativa, atrasoDoJob, FalhaDeTentativa, filaHubEntrega } from '../../queues/hub-entrega';
import { dormir, esperarAte, hubNesteArquivo, Recebida } from './apoio-entregas';

/**
 * Attempts and retries (SPEC §6 rules 3-5; DESIGN §5): an attempt succeeds on a 2xx within
 * `tempo_limite_em_segundos`; a redirect, another status, a time-out or a connection error fails
 * it; retries follow HUB_RETRY_SCHEDULE_MS (short here) with ±20% jitter and the same webhook-id;
 * after `maximo_de_tentativas` attempts the delivery sits in the error queue. Every attempt is
 * recorded with its status, duration, error and the first KiB of the answer.
 */

const t = hubNesteArquivo();
afterEach(() => {
  t.receptor.responder = () => 200;
});

const noCaminho = (caminho: string) => t.receptor.recebidas.filter((r) => r.caminho === caminho);

describe('the retry schedule, atrasoDaProximaTentativa (DESIGN §5)', () => {
  // a schedule of our own for these pure checks; the suite's own is put back afterwards
  let agenda: number[];
  beforeAll(() => {
    agenda = config().hub.retryScheduleMs;
    config().hub.retryScheduleMs = [1000, 2000, 4000];
  });
  afterAll(() => {
    config().hub.retryScheduleMs = agenda;
  });
  const comSorteio = (sorteio: number, f: () => number) => {
    const espiao = jest.spyOn(Math, 'random').mockReturnValue(sorteio);
    try {
      return f();
    } finally {
      espiao.mockRestore();
    }
  };

  test('each delay is the scheduled one with ±20% jitter', () => {
    expect(comSorteio(0, () => atrasoDaProximaTentativa(1))).toBe(800);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(1))).toBe(1000);
    expect(comSorteio(0.999999, () => atrasoDaProximaTentativa(1))).toBe(1200);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(2))).toBe(2000);
    const sorteados = Array.from({ length: 200 }, () => atrasoDaProximaTentativa(2));
    expect(Math.min(...sorteados)).toBeGreaterThanOrEqual(1600);
    expect(Math.max(...sorteados)).toBeLessThanOrEqual(2400);
    expect(new Set(sorteados).size).toBeGreaterThan(10);
  });

  test('past the end of the schedule the last delay repeats', () => {
    for (const feitas of [3, 4, 10, 19]) expect(comSorteio(0.5, () => atrasoDaProximaTentativa(feitas))).toBe(4000);
    expect(comSorteio(0, () => atrasoDaProximaTentativa(12))).toBe(3200);
  });

  test('a Retry-After (429/503) is honoured, but never beyond twice the scheduled delay nor sooner than the schedule', () => {
    const depois = (ms: number) => new FalhaDeTentativa('HTTP 503', ms);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(1, 'agenda', depois(1500)))).toBe(1500);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(1, 'agenda', depois(3_600_000)))).toBe(2000);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(3, 'agenda', depois(3_600_000)))).toBe(8000);
    // the cap carries the jitter: deliveries turned away together with a long Retry-After spread out
    expect(comSorteio(0, () => atrasoDaProximaTentativa(1, 'agenda', depois(3_600_000)))).toBe(1600);
    expect(comSorteio(0.999999, () => atrasoDaProximaTentativa(1, 'agenda', depois(3_600_000)))).toBe(2400);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(1, 'agenda', depois(0)))).toBe(1000);
    // any other failure follows the schedule alone
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(2, 'agenda', new FalhaDeTentativa('HTTP 500')))).toBe(2000);
    expect(comSorteio(0.5, () => atrasoDaProximaTentativa(2, 'agenda', new Error('x')))).toBe(2000);
  });
});

describe('the stored next attempt is the real one (DESIGN §5)', () => {
  test('the queue waits the delay chosen with a failed attempt; after any other error (no attempt made), seconds, never the schedule\'s hours', () => {
    const falha = new FalhaDeTentativa('HTTP 500');
    falha.atrasoMs = 1234;
    expect(atrasoDoJob(1, 'agenda', falha)).toBe(1234);
    // a sweep's new job starts its count again: the delay still comes with the failure
    expect(atrasoDoJob(1, 'agenda', Object.assign(new FalhaDeTentativa('HTTP 500'), { atrasoMs: 7_200_000 }))).toBe(7_200_000);
    // the database away while the job read its delivery, after four failed attempts
    const semTentativa = new Error('connect ECONNREFUSED');
    expect([1, 2, 3, 5, 7, 15, 19].map((feitas) => atrasoDoJob(feitas, 'agenda', semTentativa))).toEqual([1000, 2000, 4000, 16_000, 60_000, 60_000, 60_000]);
  });

  test('the queue waits exactly the delay stored as proxima_tentativa_em, not a second draw of the jitter', async () => {
    const agenda = config().hub.retryScheduleMs;
    // ±20% of 3 s: a second draw would differ by up to 1.2 s
    config().hub.retryScheduleMs = [3000];
    try {
      t.receptor.responder = (r, vez) => (r.caminho === '/agenda-unica' && vez === 1 ? 500 : 200);
      const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/agenda-unica'), maximo_de_tentativas: 3 });
      const entregas = await Promise.all([1, 2].map(async (n) => t.hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n })).id)));
      for (const e of entregas) {
        // the failed attempt stored its next attempt; the retry job waits in BullMQ's delayed set
        const falha = await esperarAte(async () => {
          const atual = await t.hub.entrega(e.id);
          return atual.tentativas === 1 && atual.proxima_tentativa_em !== null && atual;
        }, 'the first failure recorded');
        const job = await esperarAte(async () => {
          const j = await fila(filaHubEntrega).getJob(e.id);
          return j && (await j.getState()) === 'delayed' && j;
        }, 'the retry job delayed');
        const guardado = Date.parse(falha.proxima_tentativa_em) - Date.parse(falha.atualizada_em);
        expect({ entrega: e.id, diferenca: Math.abs(job.delay - guardado) <= 2 }).toEqual({ entrega: e.id, diferenca: true });
      }
      for (const e of entregas) await t.hub.esperarSituacao(e.id, 'entregue');
    } finally {
      config().hub.retryScheduleMs = agenda;
    }
  }, 20_000);
});

describe('attempts against a real subscriber', () => {
  test('a subscriber failing twice then answering 200 gets the same webhook-id every time, and the delivery ends entregue with one history entry per attempt (DESIGN §5, SPEC §6 rule 3)', async () => {
    const longa = `erro ${'x'.repeat(1500)}`;
    t.receptor.responder = (r, vez) =>
      r.caminho === '/falha-duas' && vez <= 2 ? { status: 500, corpo: longa } : { status: 200, corpo: '{"ok":true}' };
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/falha-duas'), maximo_de_tentativas: 5 });
    const antes = Date.now();
    const { id } = await c.publicar();
    const entrega = await t.hub.entregaDoEvento(c.assinatura.id, id);
    const final = await t.hub.esperarSituacao(entrega.id, 'entregue');

    const chamadas = noCaminho('/falha-duas');
    expect(chamadas.map((r) => r.webhookId)).toEqual([entrega.id, entrega.id, entrega.id]);
    expect(chamadas.map((r) => r.corpo.id)).toEqual([id, id, id]);
    // the retries wait for the schedule (50 ms, then 100 ms, ±20%)
    expect(chamadas[1].em - chamadas[0].em).toBeGreaterThanOrEqual(35);
    expect(chamadas[2].em - chamadas[1].em).toBeGreaterThanOrEqual(75);

    expect(final).toMatchObject({ id: entrega.id, evento_id: id, assinatura_id: c.assinatura.id, tentativas: 3 });
    expect(final).toMatchObject({ ultimo_erro: null, proxima_tentativa_em: null });
    expect(Date.parse(final.entregue_em)).toBeGreaterThanOrEqual(antes);
    const quando = { iniciada_em: expect.any(String), duracao_ms: expect.any(Number) };
    const falhou = { status_http: 500, erro: 'HTTP 500', resposta: longa.slice(0, 1024) };
    expect(final.historico).toEqual([
      { numero: 1, ...quando, ...falhou },
      { numero: 2, ...quando, ...falhou },
      { numero: 3, ...quando, status_http: 200, erro: null, resposta: '{"ok":true}' },
    ]);
    const inicios = final.historico.map((t: any) => Date.parse(t.iniciada_em));
    expect(inicios).toEqual([...inicios].sort((a, b) => a - b));
    expect(inicios[0]).toBeGreaterThanOrEqual(antes - 5);
  });

  test('an answer slower than tempo_limite_em_segundos is a failed attempt; the next one delivers (SPEC §6 rule 3)', async () => {
    t.receptor.responder = (r, vez) => (r.caminho === '/lento' && vez === 1 ? { status: 200, atrasoMs: 1600 } : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/lento'), tempo_limite_em_segundos: 1, maximo_de_tentativas: 3 });
    const { id } = await c.publicar();
    const entrega = await t.hub.entregaDoEvento(c.assinatura.id, id);
    const final = await t.hub.esperarSituacao(entrega.id, 'entregue');
    expect(final.tentativas).toBe(2);
    const [primeira, segunda] = final.historico;
    expect(primeira).toMatchObject({ numero: 1, status_http: null, resposta: null, erro: expect.stringMatching(/tempo limite/) });
    expect(primeira.duracao_ms).toBeGreaterThanOrEqual(950);
    // ended by the time-out (its error above), not by the answer; bounded with room for a busy machine
    expect(primeira.duracao_ms).toBeLessThan(3000);
    expect(segunda).toMatchObject({ numero: 2, status_http: 200, erro: null });
    expect(noCaminho('/lento').map((r) => r.webhookId)).toEqual([entrega.id, entrega.id]);
  });

  test('a redirect is a failure and is not followed (DESIGN §5)', async () => {
    t.receptor.responder = (r) => (r.caminho === '/redireciona' ? { status: 302, cabecalhos: { location: t.receptor.url('/alvo') } } : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/redireciona'), maximo_de_tentativas: 2 });
    const { id } = await c.publicar();
    const entrega = await t.hub.entregaDoEvento(c.assinatura.id, id);
    const final = await t.hub.esperarSituacao(entrega.id, 'fila_de_erro');
    expect(final.historico.map((t: any) => [t.status_http, t.erro])).toEqual([
      [302, expect.stringMatching(/redirecionamento/)],
      [302, expect.stringMatching(/redirecionamento/)],
    ]);
    await dormir(150);
    expect(noCaminho('/alvo')).toHaveLength(0);
    expect(noCaminho('/redireciona')).toHaveLength(2);
  });

  test('any 2xx is a success, not only 200: 202, 204 and 299 are recorded entregue at the first attempt, a 300 fails it (DESIGN §5)', async () => {
    // the subscriber answers each event with the status named by its n
    t.receptor.responder = (r) => {
      if (r.caminho !== '/status') return 200;
      const status = r.corpo.dados.n;
      return { status, corpo: status === 204 ? '' : '{"ok":true}' };
    };
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/status'), maximo_de_tentativas: 1 });
    const status = [202, 204, 299, 300];
    const entregas = [];
    for (const n of status) entregas.push(await t.hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n })).id));
    const finais = [];
    for (const e of entregas) {
      finais.push(await esperarAte(async () => {
        const atual = await t.hub.entrega(e.id);
        return atual.situacao !== 'pendente' && atual;
      }, `delivery ${e.id} finished`));
    }
    const sucesso = (s: number) => ['entregue', 1, null, [[s, null, '{"ok":true}']]];
    expect(finais.map((e) => [e.situacao, e.tentativas, e.ultimo_erro, e.historico.map((t: any) => [t.status_http, t.erro, t.resposta])])).toEqual([
      sucesso(202),
      ['entregue', 1, null, [[204, null, '']]],
      sucesso(299),
      // the lower end of 3xx, with no Location, is a failure all the same
      ['fila_de_erro', 1, 'redirecionamento 300 não é seguido', [[300, 'redirecionamento 300 não é seguido', '{"ok":true}']]],
    ]);
    for (const e of finais.slice(0, 3)) expect(Date.parse(e.entregue_em)).toBeGreaterThan(0);
    expect(noCaminho('/status')).toHaveLength(4);
  });

  test('after maximo_de_tentativas failures the delivery sits in the error queue, counted by entregas_na_fila_de_erro, and is not tried again (SPEC §6 rules 3-4)', async () => {
    t.receptor.responder = (r) => (r.caminho === '/sempre-falha' ? 500 : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/sempre-falha'), maximo_de_tentativas: 3 });
    expect(c.assinatura.entregas_na_fila_de_erro).toBe(0);
    const { id } = await c.publicar();
    const entrega = await t.hub.entregaDoEvento(c.assinatura.id, id);
    const final = await t.hub.esperarSituacao(entrega.id, 'fila_de_erro');
    expect(final).toMatchObject({ tentativas: 3, ultimo_erro: 'HTTP 500', proxima_tentativa_em: null, entregue_em: null });
    expect(final.historico.map((t: any) => t.numero)).toEqual([1, 2, 3]);
    await dormir(500);
    expect(noCaminho('/sempre-falha')).toHaveLength(3);
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(1);

    const segundo = await c.publicar({ n: 2 });
    await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, segundo.id)).id, 'fila_de_erro');
    const assinatura = await t.hub.assinatura(c.assinatura.id);
    expect(assinatura.entregas_na_fila_de_erro).toBe(2);
    expect(assinatura.ultima_entrega_em).toBeNull();
  });

  test('a success recorded after its delivery went to the error queue (a stale run of its job) takes it out: the subscriber has it', async () => {
    t.receptor.responder = (r) => (r.caminho === '/tarde' ? 500 : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/tarde'), maximo_de_tentativas: 2 });
    const { id } = await c.publicar();
    const naFila = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(1);
    // attempt 1's second run, answered 200 after attempt 2 failed: the two attempts stay counted
    const inicio = Date.parse(naFila.historico[0].iniciada_em);
    const entregueEm = dataSql(new Date(inicio + 1000));
    await registrarSucessos([{ tentativa: [naFila.id, 1, dataSql(new Date(inicio + 10)), 5, 200, null, '{}'], entregueEm }]);
    const depois = await t.hub.entrega(naFila.id);
    expect(depois).toMatchObject({ situacao: 'entregue', tentativas: 2, ultimo_erro: null, proxima_tentativa_em: null });
    expect(Date.parse(depois.entregue_em)).toBe(Date.parse(`${entregueEm.replace(' ', 'T')}Z`));
    expect(depois.historico.map((h: any) => `${h.numero} ${h.status_http}`).sort()).toEqual(['1 200', '1 500', '2 500']);
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(0);
  });

  test('maximo_de_tentativas 1 means a single attempt', async () => {
    t.receptor.responder = (r) => (r.caminho === '/uma-vez' ? 503 : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/uma-vez'), maximo_de_tentativas: 1 });
    const { id } = await c.publicar();
    const final = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
    expect(final.historico).toHaveLength(1);
    await dormir(300);
    expect(noCaminho('/uma-vez')).toHaveLength(1);
  });

  test('a connection error is a failed attempt, recorded with its reason', async () => {
    const fechado = createServer();
    await new Promise<void>((r) => fechado.listen(0, '127.0.0.1', r));
    const porta = (fechado.address() as AddressInfo).port;
    await new Promise((r) => fechado.close(r));
    const c = await t.hub.cenario({ url_de_destino: `http://localhost:${porta}/ninguem`, maximo_de_tentativas: 2 });
    const { id } = await c.publicar();
    const final = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
    expect(final.historico).toEqual([
      expect.objectContaining({ numero: 1, status_http: null, erro: expect.stringMatching(/falha de conexão/) }),
      expect.objectContaining({ numero: 2, status_http: null, erro: expect.stringMatching(/falha de conexão/) }),
    ]);
  });

  test('a 429 with a long Retry-After waits at most twice the scheduled delay, not the hour asked (DESIGN §5)', async () => {
    t.receptor.responder = (r, vez) => (r.caminho === '/devagar' && vez === 1 ? { status: 429, cabecalhos: { 'retry-after': '3600' } } : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/devagar'), maximo_de_tentativas: 3 });
    const { id } = await c.publicar();
    await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    const [primeira, segunda] = noCaminho('/devagar');
    // 2 × 50 ms at most, plus the time to record the attempt and hand the job back: seconds at
    // most on a busy machine, against the hour asked
    expect(segunda.em - primeira.em).toBeLessThan(10_000);
  });

  test('deliveries answered together are each recorded on its own: its attempt, its count and its own entregue_em (the worker records successes in batches)', async () => {
    // a slow subscriber keeps many attempts in flight, so their successes are recorded together;
    // event n = 7 fails once, inside the same flow
    t.receptor.responder = (r, vez) => (r.caminho !== '/juntas' ? 200 : r.corpo?.dados?.n === 7 && vez === 1 ? 500 : { atrasoMs: 40 });
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/juntas'), maximo_de_tentativas: 3 });
    const publicados = await Promise.all(Array.from({ length: 30 }, (_, n) => c.publicar({ n })));
    const pagina = await esperarAte(async () => {
      const p = await t.hub.entregas({ assinatura_id: c.assinatura.id, situacao: 'entregue' });
      return p.total === 30 && p;
    }, '30 deliveries entregue');
    expect(new Set(pagina.itens.map((e: any) => e.evento_id))).toEqual(new Set(publicados.map((p) => p.id)));

    for (const e of pagina.itens as any[]) {
      const completa = await t.hub.entrega(e.id);
      const chamadas = noCaminho('/juntas').filter((r) => r.webhookId === e.id);
      const falhouAntes = chamadas[0].corpo.dados.n === 7;
      expect(chamadas).toHaveLength(falhouAntes ? 2 : 1);
      expect(completa).toMatchObject({ tentativas: chamadas.length, ultimo_erro: null, proxima_tentativa_em: null });
      expect(completa.historico.map((t: any) => [t.numero, t.status_http])).toEqual(falhouAntes ? [[1, 500], [2, 200]] : [[1, 200]]);
      // recorded when this subscriber call was answered: after it arrived (plus the 40 ms wait), not at a batch's time
      const ultima = chamadas[chamadas.length - 1].em;
      expect(Date.parse(completa.entregue_em)).toBeGreaterThanOrEqual(ultima + 35);
      expect(Date.parse(completa.entregue_em)).toBeLessThanOrEqual(ultima + 2000);
      expect(completa.atualizada_em).toBe(completa.entregue_em);
    }
  });

  test('a success written again alone, after its batch failed with the commit perhaps landed, adds no second attempt; a replay\'s attempt 1 is still written', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/de-novo') });
    const { id } = await c.publicar();
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    const sucesso = (iniciadaEm: string): Sucesso => ({
      tentativa: [entregue.id, 1, iniciadaEm, 5, 200, null, '{}'],
      entregueEm: dataSql(new Date(entregue.entregue_em)),
    });
    const tentativas = () => TentativaDeEntrega.count({ where: { entrega_id: entregue.id } });

    // the same attempt (number and start time) again: nothing new
    await registrarSucessos([sucesso(dataSql(new Date(entregue.historico[0].iniciada_em)))], true);
    expect(await tentativas()).toBe(1);
    expect(await t.hub.entrega(entregue.id)).toMatchObject({ situacao: 'entregue', tentativas: 1, entregue_em: entregue.entregue_em });
    // attempt 1 of a replay (numbers start again at 1), started later: written
    const replay = sucesso(dataSql(new Date(Date.parse(entregue.historico[0].iniciada_em) + 60_000)));
    await registrarSucessos([replay], true);
    expect(await tentativas()).toBe(2);
    await registrarSucessos([replay], true);
    expect(await tentativas()).toBe(2);
    // the batch form writes whatever it is given: the guard above is what keeps the history right
    await registrarSucessos([replay]);
    expect(await tentativas()).toBe(3);
    await expect(registrarSucessos([replay, replay], true)).rejects.toThrow(/one success/);
  });

  test('ultima_entrega_em is null until a delivery succeeds, then the time of the last success (SPEC §6 rule 5)', async () => {
    t.receptor.responder = (r, vez) => (r.caminho === '/ultima' && vez === 1 ? 500 : 200);
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/ultima'), maximo_de_tentativas: 3 });
    expect(c.assinatura.ultima_entrega_em).toBeNull();
    const antes = Date.now();
    const { id } = await c.publicar();
    const primeira = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    // the subscription is updated right after the delivery
    const depois = await esperarAte(async () => {
      const a = await t.hub.assinatura(c.assinatura.id);
      return a.ultima_entrega_em && a;
    }, 'ultima_entrega_em set');
    expect(depois.ultima_entrega_em).toBe(primeira.entregue_em);
    expect(Date.parse(depois.ultima_entrega_em)).toBeGreaterThanOrEqual(antes);
    expect(Date.parse(depois.ultima_entrega_em)).toBeLessThanOrEqual(Date.now());

    await dormir(20);
    const outro = await c.publicar({ n: 2 });
    const segunda = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, outro.id)).id, 'entregue');
    const agora = await esperarAte(async () => {
      const a = await t.hub.assinatura(c.assinatura.id);
      return a.ultima_entrega_em === segunda.entregue_em && a;
    }, 'ultima_entrega_em moved to the second success');
    expect(Date.parse(agora.ultima_entrega_em)).toBeGreaterThan(Date.parse(depois.ultima_entrega_em));
  });
});

describe('the type name an event was published under (docs/decisoes.md: a replay resends what was published)', () => {
  /** the `tipo` of a call's body and of its webhook-token's claims */
  const tipos = (r: Recebida) => [r.corpo.tipo, decodeJwt(String(r.cabecalhos['webhook-token'])).tipo];

  test('after its type is renamed, the retries and replays of an event published before carry the name it was published under, in the body and in the token; an event published afterwards carries the new one', async () => {
    let liberar!: () => void;
    const renomeado = new Promise<void>((r) => (liberar = r));
    // the first attempt of events 1 and 2 is held until the type is renamed; it fails, and so does
    // the retry after the rename, putting both in the error queue; a replay is answered 200
    t.receptor.responder = async (r, vez) => {
      if (r.caminho !== '/renomeado' || r.corpo?.dados?.n === 3) return 200;
      if (vez === 1) await renomeado;
      return vez <= 2 ? 500 : 200;
    };
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/renomeado'), maximo_de_tentativas: 2 });
    const publicado = c.tipo.nome;
    const [um, dois] = [await c.publicar({ n: 1 }), await c.publicar({ n: 2 })];
    const [e1, e2] = [await t.hub.entregaDoEvento(c.assinatura.id, um.id), await t.hub.entregaDoEvento(c.assinatura.id, dois.id)];
    await esperarAte(() => t.receptor.de(e1.id).length === 1 && t.receptor.de(e2.id).length === 1, 'both first attempts under way');
    const novo = `${publicado}.renomeado`;
    const admin = await t.hub.admin();
    expect((await t.hub.api.patch(`/tipo_de_evento/${c.tipo.id}`, { token: admin, body: { nome: novo } })).status).toBe(200);
    liberar();
    for (const e of [e1, e2]) await t.hub.esperarSituacao(e.id, 'fila_de_erro');

    // one replayed by id, the other with its subscription's error queue
    expect((await t.hub.api.post(`/entrega/${e1.id}/reenviar`, { token: admin })).status).toBe(202);
    await t.hub.esperarSituacao(e1.id, 'entregue');
    expect((await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: admin })).body).toEqual({ reenviadas: 1 });
    await t.hub.esperarSituacao(e2.id, 'entregue');
    for (const e of [e1, e2]) expect(t.receptor.de(e.id).map(tipos)).toEqual(Array(3).fill([publicado, publicado]));

    const tres = await t.hub.publicar(c.publicador, { tipo: novo, dados: { n: 3 } });
    expect(tres.status).toBe(202);
    const e3 = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, tres.body.id)).id, 'entregue');
    expect(t.receptor.de(e3.id).map(tipos)).toEqual([[novo, novo]]);

    // an event stored without its name (by a hub older than migration 0012, during an upgrade)
    // goes out under its type's current name, as every event did before
    await Evento.update({ tipo: null }, { where: { id: um.id } });
    expect((await t.hub.api.post(`/entrega/${e1.id}/reenviar`, { token: admin })).status).toBe(202);
    await esperarAte(() => t.receptor.de(e1.id).length === 4, 'the second replay');
    expect(tipos(t.receptor.de(e1.id)[3])).toEqual([novo, novo]);
  });
});
