import { ChildProcess } from 'node:child_process';
import { SERVICOS_DA_SUITE } from '../../api';
import { resetConfig } from '../../config';
import { NomeDoServico, SERVICOS } from '../../config/services';
import { FILAS } from '../../queues';
import { ADMIN } from '../helpers/identity';
import { cliente } from '../helpers/http';
import { ateOFim, comandoDaSuite, esperarPronto, portaLivre } from '../helpers/processo';
import { limparDados } from '../helpers/suite';

const prefixo = `${process.env.DB_PREFIX}p`;
/** every service built so far: `suite start` runs them all */
const construidos = Object.keys(SERVICOS_DA_SUITE) as NomeDoServico[];
let filho: ChildProcess;
let saida = '';

afterAll(async () => {
  if (filho && filho.exitCode === null) filho.kill('SIGKILL');
  process.env.DB_PREFIX = prefixo;
  process.env.QUEUE_PREFIX = prefixo;
  resetConfig();
  await limparDados(construidos);
});

test('`suite start` serves every built service and the dashboard, and SIGTERM finishes in-flight requests then exits 0 (DESIGN §4)', async () => {
  const portas: Record<string, number> = {};
  for (const nome of construidos) portas[nome] = await portaLivre();
  const dashboard = await portaLivre();
  const processo = comandoDaSuite(['start'], {
    ...process.env,
    DB_PREFIX: prefixo,
    QUEUE_PREFIX: prefixo,
    ...Object.fromEntries(construidos.map((nome) => [`${SERVICOS[nome].env}_PORT`, String(portas[nome])])),
    DASHBOARD_PORT: String(dashboard),
    LOG_LEVEL: 'info',
    // the production cost: a login then takes long enough to be surely in flight at the SIGTERM
    IDENTITY_SENHA_CUSTO: '14',
  });
  filho = processo;
  processo.stdout.on('data', (d) => (saida += d));
  processo.stderr.on('data', (d) => (saida += d));
  const urlIdentity = `http://localhost:${portas.identity}`;
  // its output shown if it exits first, or never becomes ready
  const comSaida = {
    processo,
    get saida() {
      return saida;
    },
  };
  for (const nome of construidos) await esperarPronto(`http://localhost:${portas[nome]}`, comSaida);
  expect((await fetch(`http://localhost:${dashboard}/saude`)).status).toBe(200);
  // every queue of the suite shows in Bull Board
  const painel = (await (await fetch(`http://localhost:${dashboard}/api/queues`)).json()) as { queues: { name: string }[] };
  expect(painel.queues.map((q) => q.name).sort()).toEqual(FILAS.map((f) => f.nome).sort());

  // a login is slow on purpose (password hash): it is in flight when SIGTERM arrives
  const inicio = Date.now();
  await cliente(urlIdentity).post('/auth/login', { body: ADMIN });
  const duracaoDoLogin = Date.now() - inicio;
  let respondido = false;
  const emVoo = cliente(urlIdentity).post('/auth/login', { body: ADMIN });
  emVoo.finally(() => (respondido = true)).catch(() => undefined); // a failure shows at `await emVoo`
  await new Promise((r) => setTimeout(r, Math.min(50, duracaoDoLogin / 4)));
  const saiu = new Promise<number | null>((r) => filho.once('exit', (codigo) => r(codigo)));
  expect(respondido).toBe(false);
  filho.kill('SIGTERM');
  expect((await emVoo).status).toBe(200);
  expect(await saiu).toBe(0);
  // every line is structured JSON
  const linhas = saida.split('\n').filter((l) => l.startsWith('{'));
  expect(linhas.length).toBeGreaterThan(3);
  expect(linhas.map((l) => JSON.parse(l).msg)).toContain('encerrando');
}, 90_000);

test('the command line: an unknown command, queue or service, a wrong count of arguments or a setting in error says so on stderr and exits 1, with no stack and nothing run', async () => {
  const env = { ...process.env, DB_PREFIX: `${prefixo}c`, QUEUE_PREFIX: `${prefixo}c` };
  const casos: [string[], RegExp, Record<string, string>?][] = [
    [['worker', 'nada'], /^unknown queue "nada"; known: .*hub-entrega/],
    [['api', 'nada'], /^unknown service "nada"; known: identity/],
    // names every object has are no command or service
    [['constructor'], /^usage: suite <command>/],
    [['api', 'constructor'], /^unknown service "constructor"; known: identity/],
    // an extra word is a typo, not a variant: nothing runs (`start --dry-run` would start the suite)
    [['migrate', '--help'], /^usage: suite <command>/],
    // a setting in error, read as the modules load (their loggers' level): one line, no stack
    [['start'], /^invalid configuration: SHUTDOWN_GRACE_MS: "SHUTDOWN_GRACE_MS" must be a number\n$/, { SHUTDOWN_GRACE_MS: 'abc' }],
  ];
  const resultados = await Promise.all(casos.map(([args, , ajustes]) => ateOFim(comandoDaSuite([...args], { ...env, ...ajustes }))));
  for (const [i, r] of resultados.entries()) {
    expect({ args: casos[i][0], codigo: r.codigo, saida: r.saida }).toEqual({ args: casos[i][0], codigo: 1, saida: '' });
    expect(r.erros).toMatch(casos[i][1]);
    expect(r.erros).not.toMatch(/\bat .*\.[jt]s:\d+|"level":60/);
  }
  // processes loading the suite's code at once, beside the other test files
}, 90_000);
