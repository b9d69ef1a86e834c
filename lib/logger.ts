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

/** Structured JSON logs on stdout (stderr for commands); one child per component. */
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
 * A warning for a state that lasts: `avisar` said once a minute while it lasts, not on every call.
 * Each function made here keeps its own minute.
 */
export function umaVezPorMinuto<A extends unknown[]>(avisar: (...args: A) => void): (...args: A) => void {
  let ultimo = 0;
  return (...args) => {
    if (Date.now() - ultimo <= 60_000) return;
    ultimo = Date.now();
    avisar(...args);
  };
}
