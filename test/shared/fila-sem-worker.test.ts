import type { Registro } from '../helpers/registros';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('filas', ['error'], () => mockRegistros));

import { Queue } from 'bullmq';
import { encerrar } from '../../lib/lifecycle';
import { avisarSeNenhumWorker, DefinicaoDeFila, fecharWorker, iniciarWorker } from '../../queues/fila';
import { limparDados } from '../helpers/suite';

/**
 * A wait for a job that ran out or failed looks whether any process serves the queue (APIs run
 * apart without `suite worker <queue>`): when none does, the log says so, naming the queue and the
 * command, at most once a minute per queue; a queue with a worker, or a Redis refusing CLIENT LIST,
 * says nothing.
 */
let n = 0;
const definicao = (): DefinicaoDeFila => ({ nome: `teste-sem-worker-${n++}`, servico: 'hub', descricao: 'fila de teste', opcoesDosJobs: {} });

afterAll(async () => {
  await encerrar();
  await limparDados([]);
});

beforeEach(() => mockRegistros.splice(0));

test('a queue no process serves: an error naming it and the command, then nothing more within the minute', async () => {
  const def = definicao();
  await avisarSeNenhumWorker(def);
  expect(mockRegistros).toEqual([{ nivel: 'error', args: [{ fila: def.nome }, `nenhum processo atende a fila ${def.nome}: inicie \`suite worker ${def.nome}\``] }]);
  await avisarSeNenhumWorker(def);
  expect(mockRegistros).toHaveLength(1);
  // another queue is its own
  const outra = definicao();
  await avisarSeNenhumWorker(outra);
  expect(mockRegistros.map((r) => (r.args[0] as { fila: string }).fila)).toEqual([def.nome, outra.nome]);
});

test('a queue with a worker, or a Redis that refuses CLIENT LIST: nothing said', async () => {
  const def = definicao();
  const worker = iniciarWorker(def, async () => 'feito');
  try {
    await worker.waitUntilReady();
    await avisarSeNenhumWorker(def);
  } finally {
    await fecharWorker(worker);
  }
  const recusada = definicao();
  const recusa = jest.spyOn(Queue.prototype, 'getWorkersCount').mockRejectedValue(new Error("NOPERM User suite has no permissions to run the 'client|list' command"));
  try {
    await avisarSeNenhumWorker(recusada);
    expect(recusa).toHaveBeenCalled();
  } finally {
    recusa.mockRestore();
  }
  expect(mockRegistros).toEqual([]);
});
