import pino from 'pino';
import { config } from '../config';

let raiz: pino.Logger | undefined;

/** Structured JSON logs on stdout; one child per component. */
export function logger(componente?: string): pino.Logger {
  raiz ??= pino(opcoesDoRegistro());
  return componente ? raiz.child({ componente }) : raiz;
}

/** The root logger's options: level, fields, and what never reaches a log line. */
export function opcoesDoRegistro(): pino.LoggerOptions {
  return {
    level: config().logLevel,
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
    ],
  };
}
