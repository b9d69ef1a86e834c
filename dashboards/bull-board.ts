import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express, { NextFunction, Request, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { config, ConfigError } from '../config';
import { FILAS } from '../queues';
import { fila } from '../queues/fila';

function iguais(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * HTTP Basic auth when DASHBOARD_USUARIO/DASHBOARD_SENHA are set (required outside LOCALHOST).
 * The user name ends at the first colon; the password may hold more of them (RFC 7617).
 */
export function autenticacaoBasica(usuario: string, senha: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    const [tipo, valor] = (req.headers.authorization ?? '').split(' ');
    const credenciais = tipo === 'Basic' && valor ? Buffer.from(valor, 'base64').toString() : '';
    const separador = credenciais.indexOf(':');
    const [u, s] = separador < 0 ? [] : [credenciais.slice(0, separador), credenciais.slice(separador + 1)];
    if (u !== undefined && s !== undefined && iguais(u, usuario) && iguais(s, senha)) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="filas"');
    res.status(401).end();
  };
}

/**
 * Outside LOCALHOST the dashboard needs its credentials: checked before a process that serves it
 * opens anything else, so a missing one stops it with one line, not after its workers took jobs.
 */
export function conferirCredenciaisDoDashboard(): void {
  const { usuario, senha } = config().dashboard;
  if (config().ambiente !== 'LOCALHOST' && !(usuario && senha)) {
    throw new ConfigError('DASHBOARD_USUARIO and DASHBOARD_SENHA are required outside LOCALHOST');
  }
}

/** Bull Board over every queue of the suite (operators watch queues here). */
export function appDoDashboard(): express.Express {
  conferirCredenciaisDoDashboard();
  const { usuario, senha } = config().dashboard;
  const adaptador = new ExpressAdapter();
  adaptador.setBasePath('/');
  createBullBoard({
    // on a connection of their own, without the producers' command deadline (lib/redis.ts)
    queues: FILAS.map((def) => new BullMQAdapter(fila(def, 'painel'), { description: def.descricao })),
    serverAdapter: adaptador,
    options: { uiConfig: { boardTitle: 'Filas da suíte' } },
  });
  const app = express();
  app.disable('x-powered-by');
  app.get('/saude', (_req, res) => res.json({ status: 'ok' }));
  if (usuario && senha) app.use(autenticacaoBasica(usuario, senha));
  app.use('/', adaptador.getRouter());
  return app;
}
