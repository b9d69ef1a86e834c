import { existsSync } from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import ipaddr from 'ipaddr.js';
import type { Rede } from '../lib/destino-seguro';
import { NOMES_DOS_SERVICOS, NomeDoServico, PORTA_DO_DASHBOARD, SERVICOS } from './services';

/** The options a MYSQL_URL may carry in its query string (read by lib/database.ts servidorDaUrl); any other is refused. */
export const OPCOES_DA_URL_DO_MYSQL = ['socketPath', 'ssl', 'sslCa'] as const;

export type Ambiente = 'LOCALHOST' | 'SANDBOX' | 'PRODUCTION';

export interface ConfigDoServico {
  url: string;
  porta: number;
  clientId?: string;
  clientSecret?: string;
}

export interface Config {
  ambiente: Ambiente;
  servicos: Record<NomeDoServico, ConfigDoServico>;
  mysqlUrl: string;
  dbPrefix: string;
  /** connections of each of a service's four database pools, per process (DB_CONEXOES_POR_POOL; lib/database.ts LIMITES_DOS_POOLS) */
  dbConexoesPorPool: number;
  redisUrl: string;
  queuePrefix: string;
  logLevel: string;
  trustProxy: string | number | boolean;
  /** the address the services and the dashboard listen on; undefined: every interface */
  listenHost?: string;
  dataDir: string;
  shutdownGraceMs: number;
  dashboard: { porta: number; usuario?: string; senha?: string };
  /** a master's access token from identity, for `suite remove-app-files` only (MASTER_TOKEN): no service reads it */
  tokenDoMaster?: string;
  identity: {
    adminEmail?: string;
    adminSenha?: string;
    masterEmails: string[];
    chavePrivadaArquivo?: string;
    /** PEM files (private or public keys) published in the JWKS, never signing: the old key after a rotation, the next before it signs (listed as PATH lists them) */
    chavesDeVerificacaoArquivos: string[];
    loginLimitePorMinuto: number;
    tokenUsuarioSegundos: number;
    tokenAplicativoSegundos: number;
    /** log2 of scrypt's N for new password hashes (tests lower it: the hash is slow on purpose) */
    senhaCusto: number;
    /** days an outbox event is kept after the hub accepted it (IDENTITY_OUTBOX_RETENCAO_DIAS) */
    outboxRetencaoDias: number;
  };
  acesso: { cacheSegundos: number; esperaSyncMs: number };
  hub: {
    retryScheduleMs: number[];
    retencaoDias: number;
    chavePrivadaArquivo?: string;
    /** key that encrypts the stored signing keys (HUB_CHAVE_DE_CIFRA; generated in LOCALHOST) */
    chaveDeCifra?: string;
    /** deliveries to private, loopback or link-local addresses (SSRF guard); LOCALHOST allows them */
    permitirDestinosPrivados: boolean;
    /** private networks deliveries may reach with the guard on (an internal subscriber), none by default */
    redesPermitidas: Rede[];
    entregaLockMs: number;
    entregaConcorrencia: number;
    entregaPorAssinatura: number;
    esperaSyncMs: number;
  };
  leads: { cnpjLimitePorMinuto: number; importacaoLockMs: number };
  files: {
    /** an upload past this size answers 413 and leaves nothing stored (FILES_TAMANHO_MAXIMO_MB, in MiB) */
    tamanhoMaximoBytes: number;
    /** HMAC key of the signed download URLs; absent in LOCALHOST: generated on first start, kept in the database */
    segredoDeAssinatura?: string;
    /** keys that check download URLs but never sign them (a rotation: the next key before it signs, the last one after) */
    segredosDeVerificacao: string[];
    /** the local-disk storage's folder (default `<DATA_DIR>/arquivos`) */
    diretorio: string;
    /** an upload not received whole within this answers 408 and leaves nothing stored (FILES_PRAZO_DO_ENVIO_S) */
    prazoDoEnvioMs: number;
  };
  sales: {
    /** key (32+ characters) that encrypts the secrets of configured systems; absent in LOCALHOST: generated, kept in the database */
    chaveDeCifra?: string;
    /** how long a contact may wait, with the robot silent, before the conversation goes to the team */
    transferenciaEsperaSegundos: number;
    /** how often the hand-over trigger looks for such conversations */
    transferenciaIntervaloSegundos: number;
    /** delay between attempts to copy an attachment to file storage (SPEC 4.6 rule 7: 30 minutes) */
    anexoRetryMs: number;
    /**
     * how long after it was recorded an attachment's copy may be put off by failures of our side
     * without spending attempts; past it they count as the attachment's own (7 days by default)
     */
    anexoAdiamentoMaximoMs: number;
    /** attachment downloads from private addresses other than the chat platform's own (SSRF guard); LOCALHOST allows them */
    permitirDownloadsPrivados: boolean;
    /**
     * `texto` of GET /conversa/filtro: `indice` (default) keeps a bigram index of the messages where
     * the database has one (MariaDB's Mroonga engine) and reads the messages otherwise; `varredura`
     * always reads the messages, and removes the index at start (api/sales/busca-de-texto.ts)
     */
    buscaDeTexto: 'indice' | 'varredura';
  };
}

/** https, or http to this machine's own loopback (a local proxy that adds TLS, say). */
function urlProtegida(url: string): boolean {
  const u = new URL(url);
  if (u.protocol === 'https:') return true;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || (ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback');
}

/** scrypt's log2 N for passwords outside LOCALHOST: OWASP's minimum for r = 8 and p = 5, the suite's (its list trades N against p) */
const SENHA_CUSTO_MINIMO_FORA_DO_LOCALHOST = 14;

const servicoKeys: Record<string, Joi.Schema> = {};
for (const nome of NOMES_DOS_SERVICOS) {
  const p = SERVICOS[nome].env;
  servicoKeys[`${p}_URL`] = Joi.string().uri({ scheme: ['http', 'https'] });
  servicoKeys[`${p}_PORT`] = Joi.number().integer().min(1).max(65535);
  servicoKeys[`${p}_CLIENT_ID`] = Joi.string().max(64);
  servicoKeys[`${p}_CLIENT_SECRET`] = Joi.string().max(200);
}

/** A `trust proxy` list holding a range of every address (`0.0.0.0/0`, `::/0`): `true` by another name. */
const confiaEmTodos = (v: unknown) => typeof v === 'string' && v.split(',').some((e) => /\/0+$/.test(e.trim()));

/** Express's names for address ranges a `trust proxy` list may hold. */
const FAIXAS_NOMEADAS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY as Express takes it: `true`/`false`, a hop count, or a comma-separated list of
 * addresses, CIDRs and named ranges. Checked here, so a typo stops the start with the variable's
 * name instead of an "invalid IP address" from deep inside Express.
 */
function confiancaNoProxy(valor: string, h: Joi.CustomHelpers): string | number | boolean | Joi.ErrorReport {
  const v = valor.trim();
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^\d+$/.test(v)) return Number(v);
  const invalidos = v
    .split(',')
    .map((e) => e.trim())
    .filter((e) => !FAIXAS_NOMEADAS.has(e) && !ipaddr.isValid(e) && !ehCidr(e));
  return invalidos.length ? h.message({ custom: `{{#label}} has entries that are no address, CIDR or named range: ${invalidos.join(', ')}` }) : v;
}

/**
 * A list setting's entries, by commas; files by the system's path delimiter (`:`, `;` on
 * Windows), as PATH lists them, since a comma may be part of a file's name.
 */
const itensDaLista = (valor: string | undefined, separador = ',') =>
  (valor ?? '')
    .split(separador)
    .map((e) => e.trim())
    .filter(Boolean);

const ehCidr = (e: string) => {
  try {
    ipaddr.parseCIDR(e);
    return true;
  } catch {
    return false;
  }
};

/**
 * A network of HUB_REDES_PERMITIDAS: a CIDR, or a CIDR and one port after its prefix length
 * (`10.20.0.0/16:8443`, `fd00:1::/64:443`), so an IPv6 range reads the same way. Null when it is
 * neither.
 */
function lerRede(e: string): Rede | null {
  const m = /^(.+\/\d{1,3})(?::(\d{1,5}))?$/.exec(e);
  if (!m || !ehCidr(m[1])) return null;
  const [ip, bits] = ipaddr.parseCIDR(m[1]);
  if (m[2] === undefined) return [ip, bits];
  const porta = Number(m[2]);
  return porta >= 1 && porta <= 65535 ? [ip, bits, porta] : null;
}

/** A comma-separated list of networks (`10.20.0.0/16,fd00:1::/64:443`): a bare address or a typo stops the start. */
function listaDeRedes(valor: string, h: Joi.CustomHelpers): string | Joi.ErrorReport {
  const invalidos = itensDaLista(valor).filter((e) => !lerRede(e));
  return invalidos.length ? h.message({ custom: `{{#label}} has entries that are no CIDR, or CIDR:port: ${invalidos.join(', ')}` }) : valor;
}

/** Comma-separated keys, each as long as FILES_SEGREDO_DE_ASSINATURA must be. */
function listaDeSegredos(valor: string, h: Joi.CustomHelpers): string | Joi.ErrorReport {
  const itens = itensDaLista(valor);
  return !itens.length || itens.some((e) => e.length < 32 || e.length > 512)
    ? h.message({ custom: '{{#label}} must list keys of 32 to 512 characters, separated by commas' })
    : valor;
}

/**
 * How the suite checks an e-mail address: by its syntax only (DESIGN §10), so any domain, a
 * reserved or internal one (`.local`, `.test`) or one of a single label (`ops@localhost`) included.
 */
export const SINTAXE_DO_EMAIL: Joi.EmailOptions = { tlds: { allow: false }, minDomainSegments: 1 };

const EMAIL = Joi.string().email(SINTAXE_DO_EMAIL);

const envSchema = Joi.object({
  APP_ENV: Joi.string().valid('LOCALHOST', 'SANDBOX', 'PRODUCTION').default('LOCALHOST'),
  MYSQL_URL: Joi.string()
    .uri({ scheme: ['mysql', 'mariadb'] })
    // an option the suite does not read (a TLS setting misspelled) would be ignored without a word
    .custom((v: string, h) => {
      const u = new URL(v);
      // each service has a database of its own (DB_PREFIX_<service>): a database named here would be ignored
      if (u.pathname !== '' && u.pathname !== '/') {
        return h.message({ custom: '{{#label}} names a database, which the suite does not read: each service has its own, named by DB_PREFIX' });
      }
      const desconhecidas = [...u.searchParams.keys()].filter((k) => !(OPCOES_DA_URL_DO_MYSQL as readonly string[]).includes(k));
      if (desconhecidas.length) return h.message({ custom: `{{#label}} has options the suite does not read (${desconhecidas.join(', ')}); it reads ${OPCOES_DA_URL_DO_MYSQL.join(', ')}` });
      const ssl = u.searchParams.get('ssl');
      if (ssl !== null && ssl !== 'true' && ssl !== 'false') return h.message({ custom: '{{#label}} ssl must be true or false' });
      const ca = u.searchParams.get('sslCa');
      if (ca !== null) {
        if (ssl === 'false') return h.message({ custom: '{{#label}} sslCa asks for TLS, which ssl=false turns off' });
        // read by every process from its own folder: a relative path would name another file in each
        if (!path.isAbsolute(ca) || !existsSync(ca)) return h.message({ custom: '{{#label}} sslCa must be the absolute path of a PEM file that exists' });
      }
      return v;
    })
    .default('mysql://root@127.0.0.1:3306'),
  DB_PREFIX: Joi.string().pattern(/^[A-Za-z0-9_]{1,40}$/).default('suite'),
  // at least 2: a migration holds one of Sequelize's under its lock while its statements take
  // another; 4 × 5 per service keeps `npm start`'s six services at 120, under the server's default 151
  DB_CONEXOES_POR_POOL: Joi.number().integer().min(2).max(1000).default(5),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: Joi.string().pattern(/^[A-Za-z0-9_{}:-]{1,60}$/).default('suite'),
  TRUST_PROXY: Joi.string().custom(confiancaNoProxy, 'trust proxy').default('loopback'),
  LISTEN_HOST: Joi.string().custom((v: string, h) => (ipaddr.isValid(v) || v === 'localhost' ? v : h.message({ custom: '{{#label}} must be an IP address' }))),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  DATA_DIR: Joi.string().default('data'),
  SHUTDOWN_GRACE_MS: Joi.number().integer().min(100).max(120000).default(10000),
  DASHBOARD_PORT: Joi.number().integer().min(1).max(65535).default(PORTA_DO_DASHBOARD),
  // HTTP Basic splits user and password at the first colon
  DASHBOARD_USUARIO: Joi.string().pattern(/^[^:]+$/).messages({ 'string.pattern.base': '{{#label}} cannot hold ":" (HTTP Basic splits at it)' }),
  DASHBOARD_SENHA: Joi.string().min(12),
  // the bare JWT, as POST /auth/login's access_token: a pasted `Bearer …` or quotes stop here, named
  MASTER_TOKEN: Joi.string()
    .pattern(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    .messages({ 'string.pattern.base': '{{#label}} must be the access token alone (header.payload.signature), as POST /auth/login answers it' }),
  IDENTITY_ADMIN_EMAIL: EMAIL,
  IDENTITY_ADMIN_SENHA: Joi.string().min(8).max(200),
  // a typo would leave the intended master an ordinary user without a word
  MASTER_EMAILS: Joi.string()
    .allow('')
    .default('')
    .custom((v: string, h) => {
      const erradas = v.split(/[\s,;]+/).filter((e) => e && EMAIL.validate(e).error);
      return erradas.length ? h.message({ custom: `{{#label}} has entries that are not e-mail addresses (${erradas.join(', ')})` }) : v;
    }),
  IDENTITY_CHAVE_PRIVADA_ARQUIVO: Joi.string(),
  IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: Joi.string(),
  IDENTITY_LOGIN_LIMITE_POR_MINUTO: Joi.number().integer().min(1).default(20),
  IDENTITY_TOKEN_USUARIO_SEGUNDOS: Joi.number().integer().min(60).default(8 * 3600),
  IDENTITY_TOKEN_APLICATIVO_SEGUNDOS: Joi.number().integer().min(60).default(3600),
  IDENTITY_SENHA_CUSTO: Joi.number().integer().min(10).max(17).default(14),
  // as long as the hub keeps the event and its deliveries by default (HUB_RETENCAO_DIAS): one can be
  // followed from identity to its subscribers for the whole period
  IDENTITY_OUTBOX_RETENCAO_DIAS: Joi.number().integer().min(1).max(3650).default(30),
  ACESSO_CACHE_SEGUNDOS: Joi.number().integer().min(0).max(300).default(300),
  ACESSO_ESPERA_SYNC_MS: Joi.number().integer().min(1).max(30000).default(5000),
  // each delay 1 ms to 30 days: 0 would retry at once, in a loop; past 30 days, a retry after
  // the history it belongs to is purged (and 1e20 ms is no date at all)
  HUB_RETRY_SCHEDULE_MS: Joi.string()
    .pattern(/^\d+(,\d+)*$/)
    .custom((v: string, h) => (v.split(',').every((d) => Number(d) >= 1 && Number(d) <= 30 * 86_400_000) ? v : h.message({ custom: '{{#label}} delays must each be 1 ms to 30 days' })))
    .default('5000,300000,1800000,7200000,18000000,36000000'),
  HUB_RETENCAO_DIAS: Joi.number().integer().min(1).default(30),
  HUB_CHAVE_PRIVADA_ARQUIVO: Joi.string(),
  HUB_PERMITIR_DESTINOS_PRIVADOS: Joi.boolean(),
  PERMITIR_HTTP_ENTRE_SERVICOS: Joi.boolean().default(false),
  HUB_REDES_PERMITIDAS: Joi.string().custom(listaDeRedes, 'CIDR list'),
  // renewed every half lock while the job runs: a lock shorter than a stall of the worker's event
  // loop (or of its Redis) has the job taken for a dead worker's and sent twice
  HUB_ENTREGA_LOCK_MS: Joi.number().integer().min(1000).default(60_000),
  HUB_ENTREGA_CONCORRENCIA: Joi.number().integer().min(1).max(1000).default(50),
  HUB_ENTREGA_POR_ASSINATURA: Joi.number().integer().min(1).max(1000).default(10),
  HUB_ESPERA_SYNC_MS: Joi.number().integer().min(1).max(30000).default(3000),
  LEADS_CNPJ_LIMITE_POR_MINUTO: Joi.number().integer().min(1).default(60),
  // BullMQ's default: an import's worker that stalls past it (event loop, Redis) has its job failed
  LEADS_IMPORTACAO_LOCK_MS: Joi.number().integer().min(1000).default(30_000),
  FILES_TAMANHO_MAXIMO_MB: Joi.number().integer().min(1).max(5120).default(25),
  // listed as it is in FILES_SEGREDOS_DE_VERIFICACAO at the next rotation, which splits on commas and trims
  FILES_SEGREDO_DE_ASSINATURA: Joi.string()
    .min(32)
    .max(512)
    .pattern(/^[^,\s](?:[^,]*[^,\s])?$/)
    .messages({ 'string.pattern.base': '{{#label}} must hold no comma nor start or end with a space (it becomes a FILES_SEGREDOS_DE_VERIFICACAO key at a rotation)' }),
  FILES_SEGREDOS_DE_VERIFICACAO: Joi.string().custom(listaDeSegredos, 'comma-separated keys of 32 to 512 characters'),
  FILES_DIRETORIO: Joi.string(),
  FILES_PRAZO_DO_ENVIO_S: Joi.number().integer().min(1).max(86_400).default(3600),
  SALES_CHAVE_DE_CIFRA: Joi.string().min(32).max(512),
  HUB_CHAVE_DE_CIFRA: Joi.string().min(32).max(512),
  SALES_TRANSFERENCIA_ESPERA_SEGUNDOS: Joi.number().integer().min(1).max(86400).default(300),
  SALES_TRANSFERENCIA_INTERVALO_SEGUNDOS: Joi.number().integer().min(1).max(3600).default(60),
  SALES_ANEXO_RETRY_MS: Joi.number().integer().min(1).max(86_400_000).default(30 * 60 * 1000),
  // a week: longer than an outage or a secret renewal left over a long weekend, short enough that a
  // copy our side can never make (file storage failing on that one file) stops within days
  SALES_ANEXO_ADIAMENTO_MAXIMO_MS: Joi.number().integer().min(0).max(90 * 86_400_000).default(7 * 86_400_000),
  SALES_PERMITIR_DOWNLOADS_PRIVADOS: Joi.boolean(),
  SALES_BUSCA_DE_TEXTO: Joi.string().valid('indice', 'varredura').default('indice'),
  ...servicoKeys,
})
  // one without the other would leave the dashboard open in LOCALHOST, or never openable
  .and('DASHBOARD_USUARIO', 'DASHBOARD_SENHA')
  .unknown(true);

export class ConfigError extends Error {}

/** Reads and validates the environment; a bad value throws naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // an empty variable counts as unset (compose files and shells often pass `VAR=`)
  const definidas = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const { value, error } = envSchema.validate(definidas, { abortEarly: false, convert: true });
  if (error) {
    const detalhes = error.details.map((d) => `${d.path.join('.')}: ${d.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${detalhes}`);
  }
  const ambiente = value.APP_ENV as Ambiente;
  const servicos = {} as Record<NomeDoServico, ConfigDoServico>;
  for (const nome of NOMES_DOS_SERVICOS) {
    const p = SERVICOS[nome].env;
    const porta: number = value[`${p}_PORT`] ?? SERVICOS[nome].porta;
    let url: string | undefined = value[`${p}_URL`];
    // the AI gateway is not run locally: LOCALHOST uses SANDBOX's, whose address only AI_URL can give (DESIGN §2)
    if (!url && ambiente === 'LOCALHOST' && nome !== 'ai') url = `http://localhost:${porta}`;
    servicos[nome] = {
      url: (url ?? '').replace(/\/+$/, ''),
      porta,
      clientId: value[`${p}_CLIENT_ID`],
      clientSecret: value[`${p}_CLIENT_SECRET`],
    };
  }
  // the mark of a suite's application (identity's start) names one service: an application shared
  // by two would be marked for each in turn, at every start
  const porClientId = new Map<string, string>();
  for (const nome of NOMES_DOS_SERVICOS) {
    const id = servicos[nome].clientId;
    if (!id) continue;
    const outro = porClientId.get(id);
    if (outro) throw new ConfigError(`invalid configuration: ${outro}_CLIENT_ID and ${SERVICOS[nome].env}_CLIENT_ID name the same application; each service has its own`);
    porClientId.set(id, SERVICOS[nome].env);
  }
  if (ambiente !== 'LOCALHOST') {
    // all in one message: an operator setting up a host learns them in one start, not one a start
    const faltando = [
      ...NOMES_DOS_SERVICOS.filter((n) => !servicos[n].url).map((n) => `${SERVICOS[n].env}_URL`),
      ...(value.IDENTITY_CHAVE_PRIVADA_ARQUIVO ? [] : ['IDENTITY_CHAVE_PRIVADA_ARQUIVO']),
    ];
    if (faltando.length) throw new ConfigError(`invalid configuration: ${faltando.join(', ')} required outside LOCALHOST`);
    // tokens (masters' among them) and applications' client secrets travel on these addresses
    const emClaro = NOMES_DOS_SERVICOS.filter((n) => !urlProtegida(servicos[n].url)).map((n) => `${SERVICOS[n].env}_URL`);
    if (emClaro.length && !value.PERMITIR_HTTP_ENTRE_SERVICOS) {
      throw new ConfigError(
        `invalid configuration: ${emClaro.join(', ')} must be https outside LOCALHOST (tokens and client secrets travel on them); http is taken for a loopback host, or everywhere with PERMITIR_HTTP_ENTRE_SERVICOS=true where the network encrypts it (a service mesh's mTLS)`,
      );
    }
    // `true` believes the first X-Forwarded-For address, which the client writes: each request could
    // name a fresh address and pass every per-address limit (logins, the CNPJ lookup, the dashboard)
    if (value.TRUST_PROXY === true || confiaEmTodos(value.TRUST_PROXY)) {
      throw new ConfigError('invalid configuration: TRUST_PROXY=true (or a range of every address) outside LOCALHOST believes any X-Forwarded-For a client writes; name the proxies (addresses, CIDRs) or their hop count');
    }
    if (value.IDENTITY_SENHA_CUSTO < SENHA_CUSTO_MINIMO_FORA_DO_LOCALHOST) {
      throw new ConfigError(`invalid configuration: IDENTITY_SENHA_CUSTO must be at least ${SENHA_CUSTO_MINIMO_FORA_DO_LOCALHOST} outside LOCALHOST (lower costs are for tests)`);
    }
  }
  return {
    ambiente,
    servicos,
    mysqlUrl: value.MYSQL_URL,
    dbPrefix: value.DB_PREFIX,
    dbConexoesPorPool: value.DB_CONEXOES_POR_POOL,
    redisUrl: value.REDIS_URL,
    queuePrefix: value.QUEUE_PREFIX,
    logLevel: value.LOG_LEVEL,
    trustProxy: value.TRUST_PROXY,
    // LOCALHOST generates its keys, opens the dashboard and turns the SSRF guard off: this machine only
    listenHost: value.LISTEN_HOST ?? (ambiente === 'LOCALHOST' ? '127.0.0.1' : undefined),
    dataDir: value.DATA_DIR,
    shutdownGraceMs: value.SHUTDOWN_GRACE_MS,
    dashboard: { porta: value.DASHBOARD_PORT, usuario: value.DASHBOARD_USUARIO, senha: value.DASHBOARD_SENHA },
    tokenDoMaster: value.MASTER_TOKEN,
    identity: {
      // in the form the routes keep addresses in (api/identity/schemas.ts): NFC, lower case
      adminEmail: value.IDENTITY_ADMIN_EMAIL?.normalize('NFC').toLowerCase(),
      adminSenha: value.IDENTITY_ADMIN_SENHA,
      masterEmails: String(value.MASTER_EMAILS)
        .split(/[\s,;]+/)
        .map((e) => e.trim().normalize('NFC').toLowerCase())
        .filter(Boolean),
      chavePrivadaArquivo: value.IDENTITY_CHAVE_PRIVADA_ARQUIVO,
      chavesDeVerificacaoArquivos: itensDaLista(value.IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS, path.delimiter),
      loginLimitePorMinuto: value.IDENTITY_LOGIN_LIMITE_POR_MINUTO,
      tokenUsuarioSegundos: value.IDENTITY_TOKEN_USUARIO_SEGUNDOS,
      tokenAplicativoSegundos: value.IDENTITY_TOKEN_APLICATIVO_SEGUNDOS,
      senhaCusto: value.IDENTITY_SENHA_CUSTO,
      outboxRetencaoDias: value.IDENTITY_OUTBOX_RETENCAO_DIAS,
    },
    acesso: { cacheSegundos: value.ACESSO_CACHE_SEGUNDOS, esperaSyncMs: value.ACESSO_ESPERA_SYNC_MS },
    hub: {
      retryScheduleMs: String(value.HUB_RETRY_SCHEDULE_MS).split(',').map(Number),
      retencaoDias: value.HUB_RETENCAO_DIAS,
      chavePrivadaArquivo: value.HUB_CHAVE_PRIVADA_ARQUIVO,
      chaveDeCifra: value.HUB_CHAVE_DE_CIFRA,
      permitirDestinosPrivados: value.HUB_PERMITIR_DESTINOS_PRIVADOS ?? ambiente === 'LOCALHOST',
      redesPermitidas: itensDaLista(value.HUB_REDES_PERMITIDAS).map((e) => lerRede(e)!),
      entregaLockMs: value.HUB_ENTREGA_LOCK_MS,
      entregaConcorrencia: value.HUB_ENTREGA_CONCORRENCIA,
      entregaPorAssinatura: value.HUB_ENTREGA_POR_ASSINATURA,
      esperaSyncMs: value.HUB_ESPERA_SYNC_MS,
    },
    leads: { cnpjLimitePorMinuto: value.LEADS_CNPJ_LIMITE_POR_MINUTO, importacaoLockMs: value.LEADS_IMPORTACAO_LOCK_MS },
    files: {
      tamanhoMaximoBytes: value.FILES_TAMANHO_MAXIMO_MB * 1024 * 1024,
      segredoDeAssinatura: value.FILES_SEGREDO_DE_ASSINATURA,
      segredosDeVerificacao: itensDaLista(value.FILES_SEGREDOS_DE_VERIFICACAO),
      diretorio: value.FILES_DIRETORIO ?? path.join(value.DATA_DIR, 'arquivos'),
      prazoDoEnvioMs: value.FILES_PRAZO_DO_ENVIO_S * 1000,
    },
    sales: {
      chaveDeCifra: value.SALES_CHAVE_DE_CIFRA,
      transferenciaEsperaSegundos: value.SALES_TRANSFERENCIA_ESPERA_SEGUNDOS,
      transferenciaIntervaloSegundos: value.SALES_TRANSFERENCIA_INTERVALO_SEGUNDOS,
      anexoRetryMs: value.SALES_ANEXO_RETRY_MS,
      anexoAdiamentoMaximoMs: value.SALES_ANEXO_ADIAMENTO_MAXIMO_MS,
      permitirDownloadsPrivados: value.SALES_PERMITIR_DOWNLOADS_PRIVADOS ?? ambiente === 'LOCALHOST',
      buscaDeTexto: value.SALES_BUSCA_DE_TEXTO,
    },
  };
}

let atual: Config | undefined;

/** The process's configuration, read once. Nothing else reads process.env. */
export function config(): Config {
  if (!atual) atual = loadConfig();
  return atual;
}

/** Tests re-read the environment after changing it. */
export function resetConfig(env: NodeJS.ProcessEnv = process.env): Config {
  atual = loadConfig(env);
  return atual;
}
