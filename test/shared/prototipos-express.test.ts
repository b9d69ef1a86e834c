import http from 'node:http';
import { AddressInfo } from 'node:net';
import express from 'express';
import nock from 'nock';
import { escutar } from '../../lib/http-server';
import { encerrar } from '../../lib/lifecycle';

/**
 * The suite's HTTP servers make their requests and answers from subclasses of Node's holding the
 * app's Express prototypes (lib/http-server.ts `classesDoExpress`), so Express's per-request
 * Object.setPrototypeOf, which Node 20 pays for on every later property access, changes nothing.
 * What Express gives a route must be all there, the same.
 */

nock.restore();
afterAll(() => encerrar());

test('the app answers with its prototypes made by the server: Express methods, getters and the app itself, as before', async () => {
  const app = express();
  app.set('trust proxy', 'loopback');
  const prototipoDoExpress = Object.getPrototypeOf(app.request);
  let visto: Record<string, unknown> = {};
  app.get('/eco', (req, res) => {
    visto = {
      nasceuComOPrototipo: Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response,
      app: req.app === app && res.app === app,
      cabecalho: req.get('x-teste'),
      protocolo: req.protocol,
      ip: req.ip,
      aceita: req.accepts(['json', 'html']),
      consulta: req.query.a,
      caminho: req.path,
    };
    res.status(201).set('x-resposta', 'sim').json({ ok: true });
  });
  const server = await escutar(app, 0, 'teste-prototipos', '127.0.0.1');

  // the app's prototypes are now direct subclasses of Node's, holding what Express put in its own
  expect(Object.getPrototypeOf(app.request)).toBe(http.IncomingMessage.prototype);
  expect(Object.getPrototypeOf(app.response)).toBe(http.ServerResponse.prototype);
  for (const nome of Object.getOwnPropertyNames(prototipoDoExpress)) expect(Object.getOwnPropertyDescriptor(app.request, nome)).toBeDefined();

  const porta = (server.address() as AddressInfo).port;
  const res = await fetch(`http://127.0.0.1:${porta}/eco?a=1`, { headers: { 'x-teste': 'valor', 'x-forwarded-proto': 'https', accept: 'application/json' } });
  expect(res.status).toBe(201);
  expect(res.headers.get('x-resposta')).toBe('sim');
  expect(await res.json()).toEqual({ ok: true });
  expect(visto).toEqual({ nasceuComOPrototipo: true, app: true, cabecalho: 'valor', protocolo: 'https', ip: '127.0.0.1', aceita: 'json', consulta: '1', caminho: '/eco' });
  // Express's own 404 still answers
  expect((await fetch(`http://127.0.0.1:${porta}/nada`)).status).toBe(404);
});
