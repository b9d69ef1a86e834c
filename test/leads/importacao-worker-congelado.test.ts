import { QueryTypes } from 'sequelize';
import { importarCnpj } from '../../api/leads/importacao';
import { banco } from '../../lib/database';
import { esperarAte } from '../helpers/espera';
import { importacaoEmFilhosNesteArquivo } from './apoio';

/**
 * An import's worker host gone without closing its sockets (power lost, cut off): the database
 * cannot tell its connections from idle ones. Here its process is frozen (SIGSTOP) mid-import: the
 * one-import-at-a-time lock must not outlive the queue's hold on its job by much (the session's
 * wait is twice LEADS_IMPORTACAO_LOCK_MS, 2 seconds here), or every import is refused meanwhile.
 * A file of its own: the other worker tests leave a worker of the test process on the queue.
 */

const t = importacaoEmFilhosNesteArquivo();

const donoDaTrava = async () =>
  (
    await banco('leads').query<{ dono: number | null }>("SELECT IS_USED_LOCK(CONCAT(DATABASE(), '_importacao')) AS dono", { type: QueryTypes.SELECT })
  )[0].dono;

test("the frozen worker's lock goes with its session a few seconds after the queue gave its job up; run again, the month imports", async () => {
  // held at its swap by a read of the live table, then frozen
  const { cnpj, worker, dir, leitor, fim } = await t.presaNaTroca('ANTES', 'DEPOIS');
  try {
    expect(await donoDaTrava()).not.toBeNull();
    worker.kill('SIGSTOP');
    // its swap gives up its wait (2 s) and its session falls silent: dropped once its wait passes
    await esperarAte(async () => (await donoDaTrava()) === null, "the frozen worker's lock let go", 15_000);
  } finally {
    await leitor.end();
    worker.kill('SIGKILL');
  }
  expect((await fim).message).toMatch(/^the worker running the import stopped before it ended/);
  // an import by this process: refused as "em andamento" while the frozen session held the lock
  expect((await importarCnpj(dir)).linhas.estabelecimento).toBe(1);
  const res = await t.api().get(`/api/cnpj/${cnpj}`);
  expect(res.body.nome_fantasia).toBe('DEPOIS');
}, 90_000);
