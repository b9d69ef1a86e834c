import http from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import { config } from '../../config';
import { apagarArquivo, arquivoDaChave, guardarArquivo, urlsDosArquivos } from '../../api/sales/arquivos';
import { lerDoIdentity, RespostaDeErroDoIdentity } from '../../api/shared/leitura-do-identity';
import { tokenDoServico } from '../../api/shared/token-do-servico';
import { TokenRecusado } from '../../queues/fila';
import { esperarAte } from '../helpers/espera';

/**
 * An error answer whose body the suite does not read lets its connection go (lib/resposta.ts): a
 * server failing with a body it never ends held one connection per call until garbage collection.
 * Identity and file storage are one local server here, answering every call but a good token
 * request with `status` and a body started and never ended.
 */

let status = 500;
/** connections that carried an answer left unended (fetch may also open one ahead, idle, and keep it) */
const abertas = new Set<Socket>();
const servidor = http.createServer((req, res) => {
  if (req.url === '/auth/token' && status === 200) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: 'tk', expires_in: 3600 }));
    return;
  }
  abertas.add(req.socket);
  req.socket.once('close', () => abertas.delete(req.socket));
  res.writeHead(status, { 'content-type': 'application/problem+json' }).write('{"detail":"');
});

const antes = { ...config().servicos.identity, files: config().servicos.files.url, sales: { ...config().servicos.sales } };
beforeAll(async () => {
  await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
  const endereco = `http://127.0.0.1:${(servidor.address() as AddressInfo).port}`;
  config().servicos.identity.url = endereco;
  config().servicos.files.url = endereco;
});
afterAll(async () => {
  Object.assign(config().servicos.identity, { url: antes.url });
  config().servicos.files.url = antes.files;
  Object.assign(config().servicos.sales, antes.sales);
  servidor.closeAllConnections();
  await new Promise((r) => servidor.close(r));
});

/** `chamada` fails as `esperado` says, and then the connection of the answer it did not read is closed. */
async function falhaELarga(chamada: () => Promise<unknown>, esperado: unknown) {
  await expect(chamada()).rejects.toThrow(esperado as Error);
  await esperarAte(() => abertas.size === 0, 'the unread answer\'s connection closed', 2000);
}

test('identity reads: a refused token and an error answer', async () => {
  status = 401;
  await falhaELarga(() => lerDoIdentity('/usuario/x', 'tk'), TokenRecusado);
  status = 500;
  await falhaELarga(() => lerDoIdentity('/usuario/x', 'tk'), RespostaDeErroDoIdentity);
});

test("a service's token request: refused credentials and an error answer", async () => {
  // other credentials each time: refused ones are not offered again for a minute
  let n = 0;
  const novasCredenciais = () => Object.assign(config().servicos.sales, { clientId: 'sales-teste', clientSecret: `segredo-${++n}` });
  status = 401;
  novasCredenciais();
  await falhaELarga(() => tokenDoServico('sales'), /refused the sales service's credentials/);
  status = 500;
  novasCredenciais();
  await falhaELarga(() => tokenDoServico('sales'), /identity answered 500/);
});

test('file storage, called by sales: upload refused, listing, lookup by key and removal failing', async () => {
  status = 200;
  Object.assign(config().servicos.sales, { clientId: 'sales-teste', clientSecret: 'segredo-valido' });
  const token = await tokenDoServico('sales');
  expect(token).toBe('tk');
  status = 422;
  await falhaELarga(() => guardarArquivo('a.txt', 'text/plain', Readable.from(['abc']), { prazoMs: 5000, chave: 'k1', token: token! }), /answered 422 to the upload/);
  status = 500;
  await falhaELarga(() => urlsDosArquivos(['a']), /answered 500 to GET \/arquivo\/filtro/);
  await falhaELarga(() => arquivoDaChave('k1'), /answered 500 to GET \/arquivo\/filtro\?chave=/);
  await falhaELarga(() => apagarArquivo('a'), /answered 500 to DELETE/);
});
