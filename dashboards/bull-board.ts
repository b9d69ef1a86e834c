import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express, { NextFunction, Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { aberturaDaRequisicao } from '../api/shared/abertura-da-requisicao';
import { enviarProblema, naoEncontradoRota, tratadorDeErros } from '../api/shared/http-errors';
import { chaveDoCliente, contagemPorEndereco } from '../api/shared/limite';
import { config, ConfigError } from '../config';
import { FILAS } from '../queues';
import { fila } from '../queues/fila';

/** Compared by their digests, in a time that tells neither their lengths nor where they differ. */
function iguais(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Wrong credentials an address may send in a quarter of an hour before it must wait: DASHBOARD_SENHA is not guessed online. */
export const FALHAS_NO_DASHBOARD = 10;

/**
 * HTTP Basic auth when DASHBOARD_USUARIO/DASHBOARD_SENHA are set (required outside LOCALHOST).
 * The user name ends at the first colon; the password may hold more of them (RFC 7617). Failures
 * count per client address in Redis (in memory while Redis is away); past FALHAS_NO_DASHBOARD the
 * address gets 429, right credentials included, until the quarter of an hour of its first ends.
 */
export function autenticacaoBasica(usuario: string, senha: string) {
  const obter = contagemPorEndereco('dashboard-falhas', FALHAS_NO_DASHBOARD, 15 * 60);
  const esperar = (res: Response, msAntesDaProxima: number) => {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(msAntesDaProxima / 1000))));
    enviarProblema(res, 429, 'limite_excedido', 'Credenciais erradas demais deste endereço; Retry-After diz em quantos segundos tentar de novo.');
  };
  return async (req: Request, res: Response, next: NextFunction) => {
    // the scheme's name in any case, spaces around the value (RFC 9110 §11.1)
    const valor = /^Basic +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    const credenciais = valor ? Buffer.from(valor, 'base64').toString() : '';
    const separador = credenciais.indexOf(':');
    const [u, s] = separador < 0 ? [] : [credenciais.slice(0, separador), credenciais.slice(separador + 1)];
    // both compared whatever the first gives: a wrong user name answers no sooner than a wrong password
    const certas = u !== undefined && s !== undefined && [iguais(u, usuario), iguais(s, senha)].every(Boolean);
    // a browser's first request carries no credentials: only a pair is counted or checked against
    // the count. The pair is compared first and its Redis command sent at once, so the commands of
    // requests arriving together reach Redis in their order: a right pair sent behind ten wrong
    // ones finds them counted, however many were sent side by side
    if (credenciais) {
      const cliente = chaveDoCliente(req.ip);
      try {
        if (!certas) await obter().consume(cliente);
        else {
          const falhas = await obter().get(cliente);
          if (falhas && falhas.consumedPoints >= FALHAS_NO_DASHBOARD) return esperar(res, falhas.msBeforeNext);
        }
      } catch (rej) {
        if (rej instanceof RateLimiterRes) return esperar(res, rej.msBeforeNext);
        // Redis and the stand-in in memory both failing: the count is skipped, not the check
      }
      if (certas) return next();
    }
    res.setHeader('WWW-Authenticate', 'Basic realm="filas"');
    enviarProblema(res, 401, 'nao_autenticado', 'Envie DASHBOARD_USUARIO e DASHBOARD_SENHA (HTTP Basic).');
  };
}

/** The names a browser on this machine reaches it by: `localhost` (and its subdomains, RFC 6761) and the loopback addresses. */
const HOST_LOCAL = /^(([a-z0-9-]+\.)*localhost\.?|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i;

/**
 * Without credentials (LOCALHOST) the dashboard answers only requests addressed to this machine
 * by name: a web page could otherwise point a name of its own at 127.0.0.1 (DNS rebinding) and
 * drive the queues from the developer's browser as a page of its own origin.
 */
export function somenteHostLocal(req: Request, res: Response, next: NextFunction): void {
  if (HOST_LOCAL.test(req.headers.host ?? '')) return next();
  enviarProblema(res, 403, 'proibido', 'Sem DASHBOARD_USUARIO e DASHBOARD_SENHA, o painel só atende por localhost ou 127.0.0.1.');
}

const METODOS_SEGUROS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A change (retry, clean, add a job) only from the board's own page: a page of another site the
 * operator visits could otherwise send one with the browser's credentials (or, in LOCALHOST, none
 * needed). PUT, PATCH and DELETE from another origin need the browser to ask first (CORS), which the
 * board never allows; a POST does not, so Bull Board's `add` was open to a form or a `no-cors`
 * fetch. A browser says where such a request comes from (`Sec-Fetch-Site`, or in older ones only
 * `Origin`): another site is refused, and a POST must be JSON, which no cross-site request sends
 * unasked. A client that names no origin (curl, a script) is no browser carrying someone's
 * credentials.
 */
export function somenteDaPropriaPagina(req: Request, res: Response, next: NextFunction): void {
  if (METODOS_SEGUROS.has(req.method)) return next();
  const site = req.headers['sec-fetch-site'];
  const origem = req.headers.origin;
  // Sec-Fetch-Site, which no page can set, decides when the browser sends it: a proxy that gives
  // the board its own Host (nginx's default) makes Origin and Host differ for the board's own page
  let mesmaOrigem = site === 'same-origin';
  if (site === undefined) {
    try {
      mesmaOrigem = origem === undefined || new URL(origem).host === req.headers.host;
    } catch {
      mesmaOrigem = false;
    }
  }
  if (!mesmaOrigem) return enviarProblema(res, 403, 'proibido', 'Mudanças no painel só pela página do próprio painel.');
  if (req.method === 'POST' && !req.is('application/json')) return enviarProblema(res, 415, 'tipo_nao_suportado', 'O painel só recebe JSON.');
  next();
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
  // the failures are counted per client address, believed from the proxies the services believe
  app.set('trust proxy', config().trustProxy);
  app.get('/saude', (_req, res) => res.json({ status: 'ok' }));
  // an access line per request, as the services log: the board's actions (clean, retry, remove
  // jobs) and refused credentials leave a trace, and its 500s (Bull Board answers them itself) too
  app.use(aberturaDaRequisicao('dashboard'));
  // never inside another site's frame: a page a user visits could otherwise click the board's
  // buttons (clean, retry, remove) through an invisible one, with the browser's own credentials
  app.use((_req, res, next) => {
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    next();
  });
  app.use(somenteDaPropriaPagina);
  app.use(usuario && senha ? autenticacaoBasica(usuario, senha) : somenteHostLocal);
  app.use('/', adaptador.getRouter());
  // what Bull Board does not answer itself (an unknown path, a path no URL decoder reads) is
  // answered as the services answer it: problem+json, no stack, whatever NODE_ENV says
  app.use(naoEncontradoRota());
  app.use(tratadorDeErros());
  return app;
}
