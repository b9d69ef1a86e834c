import pino from 'pino';
import { config, ConfigError } from '../config';

let raiz: pino.Logger | undefined;
/** Log lines go to stdout, or stderr for a command whose stdout is its result (logsNoStderr). */
let descritor: 1 | 2 = 1;
const saidas = new Map<number, pino.DestinationStream>();
const saida = (fd: number) => {
  if (!saidas.has(fd)) saidas.set(fd, pino.destination({ dest: fd, sync: false }));
  return saidas.get(fd)!;
};

/**
 * Structured JSON logs on stdout (stderr for commands); one child per component. A failure goes
 * under `err` as the Error itself (pino writes its type, message and stack), or under `erro` as
 * its message alone (an expected failure, whose stack says nothing): each key keeps one type, as
 * log stores that map fields by their first value's type need.
 */
export function logger(componente?: string): pino.Logger {
  // the descriptor is read at each line: loggers made as modules load, before a command says
  // where its logs go, follow it too
  raiz ??= pino(opcoesDoRegistro(), { write: (linha: string) => saida(descritor).write(linha) });
  return componente ? raiz.child({ componente }) : raiz;
}

/**
 * A command that prints its result as JSON on stdout (import-cnpj, remove-app-files...) logs on
 * stderr, so its output can be piped to a JSON tool.
 */
export function logsNoStderr(): void {
  descritor = 2;
}

/**
 * The configured level. Loggers are made as modules load, before a command reads its settings: a
 * setting in error is reported there, in one line, as a configuration error (suite.ts), not here
 * as a crash while loading.
 */
function nivel(): string {
  try {
    return config().logLevel;
  } catch (err) {
    if (err instanceof ConfigError) return 'info';
    throw err;
  }
}

/** The root logger's options: level, fields, and what never reaches a log line. */
export function opcoesDoRegistro(): pino.LoggerOptions {
  return {
    level: nivel(),
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: [
      'req.headers.authorization',
      'senha',
      'client_secret',
      '*.senha',
      '*.client_secret',
      'token',
      // a database error carries its whole statement with the values (phones, messages, hashes)
      ...['err', 'err.original', 'err.parent'].flatMap((e) => [`${e}.sql`, `${e}.parameters`]),
      // a Redis error carries its command's arguments: AUTH's is the password
      'err.command.args',
    ],
  };
}

/**
 * For errors that come in bursts of one kind (a connection out of reach fails at every retry, on
 * every client that shares it): each `chave` said once a minute, the next time with how many of it
 * were not said (`calados`). A few hundred kinds at most are remembered.
 */
export function umaVezPorMinutoPorChave<A extends unknown[]>(avisar: (calados: number, ...args: A) => void): (chave: string, ...args: A) => void {
  const vistas = new Map<string, { em: number; calados: number }>();
  return (chave, ...args) => {
    const vista = vistas.get(chave);
    if (vista && Date.now() - vista.em <= 60_000) {
      vista.calados++;
      return;
    }
    if (!vista && vistas.size >= 500) vistas.clear();
    vistas.set(chave, { em: Date.now(), calados: 0 });
    avisar(vista?.calados ?? 0, ...args);
  };
}

/**
 * A warning for a state that lasts: `avisar` said once a minute while it lasts, not on every call.
 * Each function made here keeps its own minute: umaVezPorMinutoPorChave with a single key.
 */
export function umaVezPorMinuto<A extends unknown[]>(avisar: (...args: A) => void): (...args: A) => void {
  const umaChave = umaVezPorMinutoPorChave((_calados: number, ...args: A) => avisar(...args));
  return (...args) => umaChave('', ...args);
}
