import { redis } from '../../lib/redis';
import { Evento } from '../../models/hub';
import { esperarProblema } from '../helpers/http';
import { hubNesteArquivo } from './apoio-entregas';
import { reconectarProdutor } from '../helpers/redis';

/**
 * DESIGN §8: Redis out of reach answers 503 at once, and the service works again once it is back.
 * A BullMQ queue first used while Redis is away waits for it without limit (the server down) or
 * never works (its connection closed), so the service's queues are opened as it starts: the
 * process's first publication, made while Redis is away, gets its 503, and its retry the 202 once
 * Redis is back. No delivery worker runs here, so nothing else opened the deliveries' queue before.
 */

const t = hubNesteArquivo({ entregas: false });

test("the process's first publication, made while Redis is away, answers 503 at once; its retry, Redis back, 202", async () => {
  const c = await t.hub.cenario({ url_de_destino: 'https://assinante.example.com/webhook' });
  const publicar = () => t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'primeira-sem-redis' });
  const produtor = redis('produtor');
  produtor.disconnect();
  try {
    const inicio = Date.now();
    const res = await Promise.race([publicar(), new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
    expect(res && { status: res.status, rapida: Date.now() - inicio < 5000 }).toEqual({ status: 503, rapida: true });
    esperarProblema(res!, 503);
  } finally {
    await reconectarProdutor();
  }
  // stored, and taken once Redis is back: the retry with the same id answers 202 with that event
  const repetida = await publicar();
  expect(repetida.status).toBe(202);
  expect(await Evento.count({ where: { tipo_de_evento_id: c.tipo.id } })).toBe(1);
});
