import pino from 'pino';
import { config } from '../config';

let raiz: pino.Logger | undefined;

/** Structured JSON logs on stdout; one child per component. */
export function logger(componente?: string): pino.Logger {
  if (!raiz) {
    raiz = pino({
      level: config().logLevel,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: ['req.headers.authorization', 'senha', 'client_secret', '*.senha', '*.client_secret', 'token'],
    });
  }
  return componente ? raiz.child({ componente }) : raiz;
}
