import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { config, loadConfig } from '../../config';
import { servidorDaUrl } from '../../lib/database';

/*
 * MYSQL_URL's options: TLS to a database on another host (a managed one), which a plain
 * connection would cross with its password and data in the clear. The test server has TLS off, so
 * a connection that asks for it is refused: proof the option reaches the driver.
 */

const URL_DO_TESTE = config().mysqlUrl;
const comOpcoes = (opcoes: string) => `${URL_DO_TESTE.replace(/\?.*$/, '')}?${opcoes}`;

test('ssl=true asks for TLS with the certificate checked: a server without TLS refuses the connection, which plain goes through', async () => {
  expect(servidorDaUrl(comOpcoes('ssl=true')).ssl).toEqual({ rejectUnauthorized: true, minVersion: 'TLSv1.2' });
  await expect(createConnection(servidorDaUrl(comOpcoes('ssl=true')))).rejects.toThrow(/secure connection|SSL|TLS/i);
  const simples = await createConnection(servidorDaUrl(comOpcoes('ssl=false')));
  await simples.end();
  expect(servidorDaUrl(URL_DO_TESTE).ssl).toBeUndefined();
});

test("sslCa=<file> hands the driver that authority to check the server's certificate against (it implies ssl)", () => {
  const pasta = mkdtempSync(path.join(tmpdir(), 'suite-ca-'));
  const arquivo = path.join(pasta, 'ca.pem');
  writeFileSync(arquivo, '-----BEGIN CERTIFICATE-----\nteste\n-----END CERTIFICATE-----\n');
  expect(servidorDaUrl(comOpcoes(`sslCa=${encodeURIComponent(arquivo)}`)).ssl).toEqual({
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
    ca: '-----BEGIN CERTIFICATE-----\nteste\n-----END CERTIFICATE-----\n',
  });
});

test('an option MYSQL_URL does not read, or an ssl other than true/false, stops the start naming it', () => {
  expect(() => loadConfig({ MYSQL_URL: 'mysql://root@db.example.com:3306?sslmode=REQUIRED' })).toThrow(/"MYSQL_URL" has options the suite does not read \(sslmode\)/);
  expect(() => loadConfig({ MYSQL_URL: 'mysql://root@db.example.com:3306?ssl=sim' })).toThrow(/"MYSQL_URL" ssl must be true or false/);
  // sslCa: an absolute path to a file that exists, and never beside ssl=false
  const pasta = mkdtempSync(path.join(tmpdir(), 'suite-ca-'));
  const arquivo = path.join(pasta, 'ca.pem');
  writeFileSync(arquivo, 'pem');
  expect(loadConfig({ MYSQL_URL: `mysql://root@db.example.com:3306?ssl=true&sslCa=${encodeURIComponent(arquivo)}` }).mysqlUrl).toContain('ssl=true');
  expect(() => loadConfig({ MYSQL_URL: `mysql://root@db.example.com:3306?sslCa=${encodeURIComponent(path.join(pasta, 'outro.pem'))}` })).toThrow(/sslCa must be the absolute path of a PEM file that exists/);
  expect(() => loadConfig({ MYSQL_URL: 'mysql://root@db.example.com:3306?sslCa=ca.pem' })).toThrow(/sslCa must be the absolute path/);
  expect(() => loadConfig({ MYSQL_URL: `mysql://root@db.example.com:3306?ssl=false&sslCa=${encodeURIComponent(arquivo)}` })).toThrow(/ssl=false turns off/);
  expect(loadConfig({ MYSQL_URL: 'mysql://root@localhost?socketPath=%2Frun%2Fmysqld%2Fmysqld.sock' }).mysqlUrl).toContain('socketPath');
});
