import 'reflect-metadata';
import type { Progresso } from './api/leads/importacao';
import { config, ConfigError } from './config';
import { comoId, ehId } from './api/shared/paginacao';
import { encerramentoPorSinal, encerrar, encerrarNoSinal } from './lib/lifecycle';
import { logger, logsNoStderr } from './lib/logger';
import {
  abrirBancoDoServico,
  abrirServico,
  importarCnpjPelaFila,
  iniciarApi,
  iniciarDashboard,
  iniciarTudo,
  iniciarWorkers,
  manterRepetiveis,
  migrarTudo,
} from './lib/runner';
import { FILAS } from './queues';

const AJUDA = `usage: suite <command>
  start                  every service, every worker and the dashboard in one process
  api <service>          one service's HTTP API
  worker <queue>...      workers of the named queues (${FILAS.map((f) => f.nome).join(', ')})
  dashboard              Bull Board only
  migrate                database migrations of every service, then exit
  rotate-hub-key         a new delivery signing key for the hub (listed now, signing in an hour)
  revoke-hub-key <kid>   a hub key that leaked stops signing and leaves the JWKS within a minute
  import-cnpj <dir>      import the Receita's CNPJ zips of <dir> as a queue job; waits, shows progress
  remove-app-files <id>  remove the files of an application deleted in identity (MASTER_TOKEN: a master's token)
  unlock-login <email>   lift the login lock of <email> and restart its count of failures (a master locked out)
  retry-attachment-copies [--conversa <id>]
                         new attempts, enqueued now, for the sales attachment copies that used up theirs or stopped`;

/** Commands that print their result on stdout: their logs go to stderr, so the result can be piped. */
const COMANDOS_COM_RESULTADO = new Set(['migrate', 'rotate-hub-key', 'revoke-hub-key', 'import-cnpj', 'remove-app-files', 'unlock-login', 'retry-attachment-copies']);

/**
 * A one-shot command's run: its result as a JSON line on stdout, exit code 0. Failed until known
 * to have ended well, so a signal that stops the wait exits non-zero too; a refusal (`recusa`:
 * nothing was done) or a failure is said plainly on stderr, the command named. A configuration
 * error is reported as at start.
 */
async function comResultado(comando: string, executar: () => Promise<unknown>, recusa?: new (mensagem: string) => Error): Promise<void> {
  process.exitCode = 1;
  try {
    process.stdout.write(`${JSON.stringify(await executar())}\n`);
    process.exitCode = 0;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    process.stderr.write(`${comando} ${recusa && err instanceof recusa ? 'refused' : 'failed'}: ${(err as Error).message}\n`);
  }
  await encerrar();
}

/**
 * How many arguments each command takes, least and most: one more or one fewer is a typo, not a
 * variant (`migrate --help` would otherwise run the migrations, `start --dry-run` the suite).
 */
const ARGUMENTOS: Record<string, [number, number]> = {
  start: [0, 0],
  api: [1, 1],
  worker: [1, Infinity],
  dashboard: [0, 0],
  migrate: [0, 0],
  'rotate-hub-key': [0, 0],
  'revoke-hub-key': [1, 1],
  'import-cnpj': [1, 1],
  'remove-app-files': [1, 1],
  'unlock-login': [1, 1],
  'retry-attachment-copies': [0, 2],
};

async function main(argv: string[]): Promise<void> {
  const [comando = 'start', ...args] = argv;
  // own keys only: `constructor` or `__proto__` is no command
  const [menos, mais] = Object.hasOwn(ARGUMENTOS, comando) ? ARGUMENTOS[comando] : [undefined, undefined];
  if (menos === undefined || args.length < menos || args.length > mais) throw new ConfigError(AJUDA);
  if (COMANDOS_COM_RESULTADO.has(comando)) logsNoStderr();
  config(); // a bad variable stops here, named
  encerrarNoSinal();
  switch (comando) {
    case 'start':
      return iniciarTudo();
    case 'api':
      await iniciarApi(args[0]);
      return;
    case 'worker':
      await iniciarWorkers(args);
      await manterRepetiveis(args);
      return;
    case 'dashboard':
      await iniciarDashboard();
      return;
    case 'migrate':
      // failed until done: a signal that stops it midway exits non-zero (a deploy step must not go on)
      process.exitCode = 1;
      await migrarTudo();
      process.exitCode = 0;
      await encerrar();
      return;
    case 'rotate-hub-key':
    case 'revoke-hub-key': {
      const { hub } = await import('./api/hub');
      const { revogarChave, RevogacaoRecusada, rotacionarChave } = await import('./api/hub/assinador');
      return comResultado(
        comando,
        async () => {
          // the database alone: the hub's start would take a first key under this process's cipher
          await abrirBancoDoServico(hub);
          return comando === 'rotate-hub-key' ? rotacionarChave() : revogarChave(args[0]);
        },
        RevogacaoRecusada,
      );
    }
    case 'import-cnpj': {
      const diretorio = args[0];
      return comResultado('import-cnpj', () =>
        importarCnpjPelaFila(
          diretorio,
          (p) => {
            const { fase, percentual, arquivo, indexando } = p as Progresso;
            process.stderr.write(`import-cnpj: ${fase} ${percentual}%${arquivo ? ` ${arquivo}` : ''}${indexando ? ` (índices: ${indexando.join(', ')})` : ''}\n`);
          },
          () => process.stderr.write('import-cnpj: no worker serves the import queue any more (stopped?): this process runs one and takes the job over\n'),
        ),
      );
    }
    case 'remove-app-files': {
      // file storage has no application of its own at identity: the operator's master token asks
      const token = config().tokenDoMaster;
      if (!token) throw new ConfigError("remove-app-files: set MASTER_TOKEN to a master's access token from identity (POST /auth/login)");
      // taken as the routes take an id (trimmed, lower case): in capitals it matched none of the
      // application's files, and the command said it had removed 0
      const aplicativoId = comoId(args[0]);
      if (!ehId(aplicativoId)) throw new ConfigError(`remove-app-files: "${args[0]}" is no application id`);
      const { files } = await import('./api/files');
      const { RemocaoRecusada, removerArquivosDoAplicativoApagado } = await import('./api/files/aplicativo-apagado');
      return comResultado(
        'remove-app-files',
        async () => {
          // within the result: a signal during the opening's waits (Redis, the database, another
          // process's migration) exits non-zero, as one during the removal does
          await abrirServico(files);
          const removidos = await removerArquivosDoAplicativoApagado(aplicativoId, token, ({ removidos, total }) =>
            process.stderr.write(`remove-app-files: ${removidos} of ${total} removed\n`),
          );
          return { aplicativo_id: aplicativoId, removidos };
        },
        RemocaoRecusada,
      );
    }
    case 'unlock-login': {
      const { identity } = await import('./api/identity');
      const { desbloquearLogin, DesbloqueioRecusado } = await import('./api/identity/login');
      return comResultado(
        'unlock-login',
        async () => {
          // the database alone: Redis out of reach does not keep a user's lock from being lifted
          await abrirBancoDoServico(identity);
          return desbloquearLogin(args[0]);
        },
        DesbloqueioRecusado,
      );
    }
    case 'retry-attachment-copies': {
      // none, or `--conversa <id>`: anything else is a typo, not "every conversation"
      const conversa = args[0] === '--conversa' && args.length === 2 ? args[1] : undefined;
      if (args.length && !conversa) throw new ConfigError(AJUDA);
      const { sales } = await import('./api/sales');
      const { RetomadaRecusada, retomarCopiasEsgotadas } = await import('./api/sales/anexos');
      return comResultado(
        'retry-attachment-copies',
        async () => {
          await abrirServico(sales);
          const reenfileiradas = await retomarCopiasEsgotadas(conversa);
          process.stderr.write(`retry-attachment-copies: ${reenfileiradas} ${reenfileiradas === 1 ? 'copy' : 'copies'} given new attempts and enqueued\n`);
          return { conversa_id: conversa ?? null, reenfileiradas };
        },
        RetomadaRecusada,
      );
    }
    default:
      throw new ConfigError(AJUDA);
  }
}

/** Once a one-shot command has closed what it opened, how long a handle still open may hold the process. */
const SAIDA_DO_COMANDO_MS = 5000;

const argumentos = process.argv.slice(2);
main(argumentos).then(
  () => {
    // a one-shot command has closed what it opened: a handle left open past this (a connection
    // whose close could not finish, Redis away) would otherwise hold it for ever, and the deploy
    // step or cron job running it with it
    if (!COMANDOS_COM_RESULTADO.has(argumentos[0])) return;
    setTimeout(() => {
      logger('suite').warn({ comando: argumentos[0] }, 'o comando terminou, mas algo ainda prendia o processo: saída forçada');
      process.exit();
    }, SAIDA_DO_COMANDO_MS).unref();
  },
  async (err) => {
    // a signal during the start (a deploy stopping a replica that waits for another's migration):
    // the close it began stopped the start, no failure; that close exits as a signal's does
    if (encerramentoPorSinal()) return logger('suite').info({ motivo: (err as Error).message }, 'início interrompido pelo sinal');
    if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else logger('suite').fatal({ err }, 'falha ao iniciar');
    await encerrar().catch(() => undefined);
    process.exit(1);
  },
);
