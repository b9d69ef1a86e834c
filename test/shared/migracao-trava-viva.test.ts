import { Connection } from 'mysql2/promise';
import { abrirBanco, apagarBanco, Migracao, migrar, novaConexao, PULSO_DA_TRAVA, travaDaMigracao } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';

/**
 * The migration lock lives as long as the connection holding it, which sends nothing of its own
 * while the migrations run on others: it keeps itself alive past an idle limit (a server's
 * wait_timeout, a proxy's), and once lost anyway, nothing more is migrated. The idle limit is
 * played here by a second connection killing the lock's holder once it has been idle a second.
 */
const SERVICO = 'intranet';
const lenta = (nome: string): Migracao => ({ name: nome, up: async (qi) => void (await qi.sequelize.query('SELECT SLEEP(2.5)')) });

let vigia: Connection;
const pulso = PULSO_DA_TRAVA.ms;

beforeAll(async () => {
  await abrirBanco(SERVICO, []);
  vigia = await novaConexao(SERVICO);
  PULSO_DA_TRAVA.ms = 200;
});
afterAll(async () => {
  PULSO_DA_TRAVA.ms = pulso;
  await vigia.end();
  await encerrar();
  await apagarBanco(SERVICO);
});

/** Kills the lock's holder when `matar` says so (it is given how long the holder has been idle, in s); answers how to stop, and whether it killed. */
function vigiar(matar: (ociosaHaS: number | null) => boolean) {
  let morta = false;
  let parar = false;
  const rodada = (async () => {
    while (!parar && !morta) {
      const [[{ id }]] = (await vigia.query('SELECT IS_USED_LOCK(?) AS id', [travaDaMigracao(SERVICO)])) as unknown as [[{ id: number | null }]];
      if (id !== null) {
        const [linhas] = (await vigia.query("SELECT TIME AS s FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Sleep'", [id])) as unknown as [{ s: number }[]];
        if (matar(linhas[0]?.s ?? null)) {
          await vigia.query(`KILL ${Number(id)}`);
          morta = true;
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    parar: async () => {
      parar = true;
      await rodada;
      return morta;
    },
  };
}

const feitas = async () => {
  const [linhas] = (await vigia.query('SELECT name FROM schema_migracoes ORDER BY name')) as unknown as [{ name: string }[]];
  return linhas.map((l) => l.name);
};

test('a lock connection idle a second is what an idle limit cuts: while the migrations run, it never is', async () => {
  const vigiada = vigiar((ociosaHaS) => ociosaHaS !== null && ociosaHaS >= 1);
  try {
    expect(await migrar(SERVICO, [lenta('0001-lenta')])).toEqual(['0001-lenta']);
  } finally {
    expect(await vigiada.parar()).toBe(false);
  }
});

test('the lock lost with its connection midway: the migration under way ends, the next is not run, and the start fails saying so', async () => {
  const vigiada = vigiar((ociosaHaS) => ociosaHaS !== null);
  try {
    await expect(migrar(SERVICO, [lenta('1001-lenta'), lenta('1002-lenta'), lenta('1003-lenta')])).rejects.toThrow(/migration lock .* lost with its connection/);
  } finally {
    expect(await vigiada.parar()).toBe(true);
  }
  // the one under way when the lock went was recorded; none after it ran
  const destas = (await feitas()).filter((n) => n.startsWith('100'));
  expect(destas).toEqual(['1001-lenta']);
});
