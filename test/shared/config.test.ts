import path from 'node:path';
import express from 'express';
import { loadConfig } from '../../config';

describe('configuration is validated at start (DESIGN §2)', () => {
  test('defaults give the LOCALHOST addresses and ports of DESIGN §1', () => {
    const c = loadConfig({});
    expect(c.ambiente).toBe('LOCALHOST');
    expect(c.servicos.identity.url).toBe('http://localhost:4001');
    expect(c.servicos.intranet.porta).toBe(4004);
    expect(c.dashboard.porta).toBe(4100);
    expect(c.servicos.files.url).toBe('http://localhost:4008');
    expect(c.mysqlUrl).toBe('mysql://root@127.0.0.1:3306');
    expect(c.hub.retryScheduleMs).toEqual([5000, 300000, 1800000, 7200000, 18000000, 36000000]);
    expect(c.hub.retencaoDias).toBe(30);
    expect(c.identity.outboxRetencaoDias).toBe(30);
    // four pools of 5 per service: the six of `npm start` stay under the server's default 151 connections
    expect(c.dbConexoesPorPool).toBe(5);
  });

  test('the AI gateway has no local address: LOCALHOST uses the SANDBOX one, given by AI_URL (DESIGN §2)', () => {
    expect(loadConfig({}).servicos.ai.url).toBe('');
    expect(loadConfig({}).servicos.ai.porta).toBe(4006);
    expect(loadConfig({ AI_URL: 'https://ia.sandbox.exemplo.com.br/' }).servicos.ai.url).toBe('https://ia.sandbox.exemplo.com.br');
  });

  test('the per-address limits default to 20 logins and 60 CNPJ lookups a minute (DESIGN §10)', () => {
    // unset: /auth/login and /auth/token, and the public GET /api/cnpj/{cnpj}, get DESIGN's numbers
    const c = loadConfig({});
    expect(c.identity.loginLimitePorMinuto).toBe(20);
    expect(c.leads.cnpjLimitePorMinuto).toBe(60);
  });

  test('a bad value stops with a message naming the variable', () => {
    expect(() => loadConfig({ IDENTITY_PORT: 'abc' })).toThrow(/IDENTITY_PORT/);
    expect(() => loadConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ APP_ENV: 'TESTE' })).toThrow(/APP_ENV/);
    expect(() => loadConfig({ HUB_RETRY_SCHEDULE_MS: '5s,10s' })).toThrow(/HUB_RETRY_SCHEDULE_MS/);
    expect(() => loadConfig({ HUB_RETRY_SCHEDULE_MS: '5000,0' })).toThrow(/HUB_RETRY_SCHEDULE_MS.*1 ms to 30 days/);
    expect(() => loadConfig({ HUB_RETRY_SCHEDULE_MS: '100000000000000000000' })).toThrow(/HUB_RETRY_SCHEDULE_MS.*1 ms to 30 days/);
    expect(loadConfig({ HUB_RETRY_SCHEDULE_MS: '1,2592000000' }).hub.retryScheduleMs).toEqual([1, 2_592_000_000]);
    expect(() => loadConfig({ IDENTITY_OUTBOX_RETENCAO_DIAS: '0' })).toThrow(/IDENTITY_OUTBOX_RETENCAO_DIAS/);
    expect(() => loadConfig({ IDENTITY_OUTBOX_RETENCAO_DIAS: '7d' })).toThrow(/IDENTITY_OUTBOX_RETENCAO_DIAS/);
    // BullMQ takes a wait of 0 for no bound: a listing would hang on a sync that never ends
    expect(() => loadConfig({ HUB_ESPERA_SYNC_MS: '0' })).toThrow(/HUB_ESPERA_SYNC_MS/);
    expect(() => loadConfig({ ACESSO_ESPERA_SYNC_MS: '0' })).toThrow(/ACESSO_ESPERA_SYNC_MS/);
    // one connection of Sequelize's would leave a migration waiting for itself (its lock holds it)
    expect(() => loadConfig({ DB_CONEXOES_POR_POOL: '1' })).toThrow(/DB_CONEXOES_POR_POOL/);
    expect(() => loadConfig({ DB_CONEXOES_POR_POOL: 'muitas' })).toThrow(/DB_CONEXOES_POR_POOL/);
    expect(loadConfig({ DB_CONEXOES_POR_POOL: '12' }).dbConexoesPorPool).toBe(12);
    expect(() => loadConfig({ TRUST_PROXY: 'lopback' })).toThrow(/TRUST_PROXY.*lopback/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/99, loopback' })).toThrow(/TRUST_PROXY.*10\.0\.0\.0\/99/);
    expect(() => loadConfig({ HUB_REDES_PERMITIDAS: '10.20.0.0/16, 10.30.0.7' })).toThrow(/HUB_REDES_PERMITIDAS.*10\.30\.0\.7/);
    // the dashboard's HTTP Basic: a user with a colon could never log in, one half alone leaves it open
    expect(() => loadConfig({ DASHBOARD_USUARIO: 'ops:1', DASHBOARD_SENHA: 'uma-senha-longa' })).toThrow(/DASHBOARD_USUARIO/);
    expect(() => loadConfig({ DASHBOARD_SENHA: 'uma-senha-longa' })).toThrow(/DASHBOARD_USUARIO/);
    expect(() => loadConfig({ DASHBOARD_USUARIO: 'ops' })).toThrow(/DASHBOARD_SENHA/);
    expect(loadConfig({ DASHBOARD_USUARIO: 'ops', DASHBOARD_SENHA: 'uma-senha-longa' }).dashboard).toMatchObject({ usuario: 'ops', senha: 'uma-senha-longa' });
    // SPEC 4.5 rule 7: a change of access takes effect within 5 minutes in every process
    expect(loadConfig({}).acesso.cacheSegundos).toBe(300);
    expect(() => loadConfig({ ACESSO_CACHE_SEGUNDOS: '301' })).toThrow(/ACESSO_CACHE_SEGUNDOS/);
  });

  test("each service has its own application: two <SERVICE>_CLIENT_IDs naming one stop the start, naming both variables", () => {
    expect(() => loadConfig({ HUB_CLIENT_ID: 'app-1', SALES_CLIENT_ID: 'app-1' })).toThrow(/HUB_CLIENT_ID and SALES_CLIENT_ID name the same application/);
    const c = loadConfig({ HUB_CLIENT_ID: 'app-1', SALES_CLIENT_ID: 'app-2' });
    expect([c.servicos.hub.clientId, c.servicos.sales.clientId]).toEqual(['app-1', 'app-2']);
  });

  test('LISTEN_HOST: the loopback in LOCALHOST (keys generated, dashboard open, SSRF guard off), every interface elsewhere, as given when set', () => {
    expect(loadConfig({}).listenHost).toBe('127.0.0.1');
    expect(loadConfig({ LISTEN_HOST: '0.0.0.0' }).listenHost).toBe('0.0.0.0');
    expect(loadConfig({ LISTEN_HOST: '::' }).listenHost).toBe('::');
    expect(() => loadConfig({ LISTEN_HOST: 'todas' })).toThrow(/LISTEN_HOST/);
    const urls = Object.fromEntries(['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES'].map((x) => [`${x}_URL`, `https://${x.toLowerCase()}.example.com`]));
    expect(loadConfig({ APP_ENV: 'PRODUCTION', ...urls, IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem' }).listenHost).toBeUndefined();
  });

  test('the hub refuses private, loopback and link-local destinations outside LOCALHOST unless allowed (DESIGN §5)', () => {
    const urls = Object.fromEntries(['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES'].map((x) => [`${x}_URL`, `https://${x.toLowerCase()}.example.com`]));
    const fora = { ...urls, IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem' };
    expect(loadConfig({}).hub.permitirDestinosPrivados).toBe(true);
    for (const APP_ENV of ['PRODUCTION', 'SANDBOX']) {
      expect(loadConfig({ APP_ENV, ...fora }).hub.permitirDestinosPrivados).toBe(false);
      expect(loadConfig({ APP_ENV, ...fora, HUB_PERMITIR_DESTINOS_PRIVADOS: 'true' }).hub.permitirDestinosPrivados).toBe(true);
    }
    expect(loadConfig({ HUB_PERMITIR_DESTINOS_PRIVADOS: 'false' }).hub.permitirDestinosPrivados).toBe(false);
  });

  test('HUB_REDES_PERMITIDAS is a list of CIDRs, none by default', () => {
    expect(loadConfig({}).hub.redesPermitidas).toEqual([]);
    const redes = loadConfig({ HUB_REDES_PERMITIDAS: '10.20.0.0/16, fd00:1::/64,' }).hub.redesPermitidas;
    expect(redes.map(([ip, bits]) => `${ip.toString()}/${bits}`)).toEqual(['10.20.0.0/16', 'fd00:1::/64']);
  });

  test('HUB_REDES_PERMITIDAS: a network may name one port after its prefix length; anything else stops the start, naming the entries', () => {
    const redes = loadConfig({ HUB_REDES_PERMITIDAS: '10.20.0.5/32:8443, fd00:1::/64:443, 10.30.0.0/16' }).hub.redesPermitidas;
    expect(redes.map(([ip, bits, porta]) => [`${ip.toString()}/${bits}`, porta])).toEqual([
      ['10.20.0.5/32', 8443],
      ['fd00:1::/64', 443],
      ['10.30.0.0/16', undefined],
    ]);
    for (const errada of ['10.20.0.0/16:0', '10.20.0.0/16:65536', '10.20.0.5:443', 'fd00:1::/64:', '10.20.0.0/16:80:81', '10.20.0.0/33:80']) {
      const carregar = () => loadConfig({ HUB_REDES_PERMITIDAS: `10.30.0.0/16,${errada}` });
      expect(carregar).toThrow(/HUB_REDES_PERMITIDAS/);
      expect(carregar).toThrow(`has entries that are no CIDR, or CIDR:port: ${errada}`);
    }
  });

  test('outside LOCALHOST every service address and the signing key must be given, all missing named in one message', () => {
    expect(() => loadConfig({ APP_ENV: 'PRODUCTION' })).toThrow(
      'invalid configuration: IDENTITY_URL, LEADS_URL, HUB_URL, INTRANET_URL, SALES_URL, AI_URL, TRACING_URL, FILES_URL, IDENTITY_CHAVE_PRIVADA_ARQUIVO required outside LOCALHOST',
    );
    const urls = Object.fromEntries(
      ['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES'].map((s) => [`${s}_URL`, `https://${s.toLowerCase()}.example.com/`]),
    );
    expect(() => loadConfig({ APP_ENV: 'PRODUCTION', ...urls })).toThrow(/IDENTITY_CHAVE_PRIVADA_ARQUIVO/);
    const c = loadConfig({ APP_ENV: 'PRODUCTION', ...urls, IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem' });
    expect(c.servicos.hub.url).toBe('https://hub.example.com');
  });

  test('outside LOCALHOST a service address must be https, http taken for a loopback host or when the operator says the network encrypts, every offender named in one message; LOCALHOST takes http', () => {
    const urls = Object.fromEntries(['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES'].map((x) => [`${x}_URL`, `https://${x.toLowerCase()}.example.com`]));
    const fora = { APP_ENV: 'SANDBOX', ...urls, IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem' };
    const emClaro = { IDENTITY_URL: 'http://identity.interno:4001', HUB_URL: 'http://10.0.0.7:4003' };
    expect(() => loadConfig({ ...fora, ...emClaro })).toThrow(
      'invalid configuration: IDENTITY_URL, HUB_URL must be https outside LOCALHOST (tokens and client secrets travel on them); http is taken for a loopback host, or everywhere with PERMITIR_HTTP_ENTRE_SERVICOS=true where the network encrypts it (a service mesh\'s mTLS)',
    );
    // a network that encrypts on its own (a mesh's mTLS): the operator says so
    expect(loadConfig({ ...fora, ...emClaro, PERMITIR_HTTP_ENTRE_SERVICOS: 'true' }).servicos.identity.url).toBe('http://identity.interno:4001');
    expect(() => loadConfig({ ...fora, ...emClaro, PERMITIR_HTTP_ENTRE_SERVICOS: 'false' })).toThrow(/must be https/);
    expect(() => loadConfig({ ...fora, APP_ENV: 'PRODUCTION', FILES_URL: 'http://files.example.com' })).toThrow(/^invalid configuration: FILES_URL must be https/);
    const local = loadConfig({ ...fora, IDENTITY_URL: 'http://127.0.0.1:4001', HUB_URL: 'http://localhost:4003', SALES_URL: 'http://[::1]:4005' });
    expect([local.servicos.identity.url, local.servicos.hub.url, local.servicos.sales.url]).toEqual(['http://127.0.0.1:4001', 'http://localhost:4003', 'http://[::1]:4005']);
    expect(loadConfig({ IDENTITY_URL: 'http://identity.interno:4001' }).servicos.identity.url).toBe('http://identity.interno:4001');
  });

  test('outside LOCALHOST, TRUST_PROXY=true (any X-Forwarded-For believed) and a password cost below 14 stop the start; in LOCALHOST both are taken', () => {
    const urls = Object.fromEntries(['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES'].map((x) => [`${x}_URL`, `https://${x.toLowerCase()}.example.com`]));
    const fora = { APP_ENV: 'PRODUCTION', ...urls, IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem' };
    expect(() => loadConfig({ ...fora, TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY=true \(or a range of every address\) outside LOCALHOST/);
    expect(() => loadConfig({ ...fora, TRUST_PROXY: '10.0.0.1, 0.0.0.0/0' })).toThrow(/TRUST_PROXY=true/);
    expect(() => loadConfig({ ...fora, TRUST_PROXY: '::/0' })).toThrow(/TRUST_PROXY=true/);
    expect(() => loadConfig({ ...fora, APP_ENV: 'SANDBOX', IDENTITY_SENHA_CUSTO: '12' })).toThrow(/IDENTITY_SENHA_CUSTO must be at least 14/);
    expect(loadConfig({ ...fora, TRUST_PROXY: '10.0.0.0/8, loopback', IDENTITY_SENHA_CUSTO: '15' }).trustProxy).toBe('10.0.0.0/8, loopback');
    expect(loadConfig({ ...fora, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'true', IDENTITY_SENHA_CUSTO: '10' }).trustProxy).toBe(true);
  });

  test('IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS lists files as PATH does, by the path delimiter: a comma is part of a name; none by default', () => {
    expect(loadConfig({}).identity.chavesDeVerificacaoArquivos).toEqual([]);
    const lista = ['/run/secrets/a.pem', ' /run/secrets/chave,antiga.pub.pem', ''].join(path.delimiter);
    expect(loadConfig({ IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: lista }).identity.chavesDeVerificacaoArquivos).toEqual([
      '/run/secrets/a.pem',
      '/run/secrets/chave,antiga.pub.pem',
    ]);
    expect(loadConfig({ IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: '/run/secrets/a.pem,/run/secrets/b.pem' }).identity.chavesDeVerificacaoArquivos).toEqual([
      '/run/secrets/a.pem,/run/secrets/b.pem',
    ]);
  });

  test('an empty variable counts as unset', () => {
    expect(loadConfig({ IDENTITY_ADMIN_SENHA: '', IDENTITY_PORT: '' }).servicos.identity.porta).toBe(4001);
  });

  test('MASTER_EMAILS is a list, compared without case', () => {
    expect(loadConfig({ MASTER_EMAILS: 'Ana@X.test, bia@x.test;caio@x.test ops@localhost' }).identity.masterEmails).toEqual([
      'ana@x.test',
      'bia@x.test',
      'caio@x.test',
      'ops@localhost',
    ]);
  });

  test('MYSQL_URL naming a database stops the start: each service has a database of its own, and the one named would be ignored', () => {
    expect(() => loadConfig({ MYSQL_URL: 'mysql://app:x@db.example.com:3306/appdb' })).toThrow(/"MYSQL_URL" names a database/);
    expect(loadConfig({ MYSQL_URL: 'mysql://root@db.example.com:3306/' }).mysqlUrl).toContain('db.example.com');
  });

  test('MASTER_EMAILS with an entry that is no e-mail stops the start, naming it: the intended master would be an ordinary user without a word', () => {
    expect(() => loadConfig({ MASTER_EMAILS: 'ana@x.test, bia.x.test' })).toThrow(/"MASTER_EMAILS" has entries that are not e-mail addresses \(bia\.x\.test\)/);
  });
});

test('TRUST_PROXY takes what Express takes: true/false, a hop count, or addresses, CIDRs and named ranges, and each reaches Express as such', async () => {
  const casos: [string, unknown][] = [
    ['loopback', 'loopback'],
    ['1', 1],
    ['true', true],
    ['false', false],
    ['10.0.0.0/8, loopback', '10.0.0.0/8, loopback'],
    ['::1', '::1'],
  ];
  for (const [texto, valor] of casos) {
    const trustProxy = loadConfig({ TRUST_PROXY: texto }).trustProxy;
    expect(trustProxy).toEqual(valor);
    // Express accepts it (it throws on an address it cannot read)
    expect(() => express().set('trust proxy', trustProxy)).not.toThrow();
  }
});
