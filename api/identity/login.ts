import { createHash, timingSafeEqual } from 'node:crypto';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { logger } from '../../lib/logger';
import { esperarRedis, redis } from '../../lib/redis';
import { Aplicativo, Cargo, Funcao, Setor, Usuario } from '../../models/identity';
import { Autenticador, autenticadorLocal } from '../shared/auth';
import { ErroDeDominio, naoAutenticado } from '../shared/errors';
import { assinar, jwks } from './chaves';
import { hashDeSenha, hashDesatualizado, senhaConfere } from './senhas';
import { email as emailValido } from './schemas';
import { aplicativoTitular, usuarioTitular } from './titulares';
import { desbloquearUsuario, eMaster, porEmail, SEM_BLOQUEIO, usuarioJson, UsuarioJson } from './usuarios';

/** DESIGN §3: 5 failures in a row lock the login for 15 minutes. */
export const FALHAS_ATE_BLOQUEIO = 5;
export const BLOQUEIO_MS = 15 * 60_000;

/**
 * A count of failures lasts this long from its first, a user's as an unknown e-mail's: "in a row"
 * is within a day, not typos months apart; and alike, the two cannot be told apart by waiting.
 */
export const CONTAGEM_DE_FALHAS_MS = 24 * 3600_000;

export interface RespostaDeToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

const log = logger('identity-login');

const credenciaisInvalidas = () => naoAutenticado('E-mail ou senha inválidos.');

const bloqueado = (ate: Date, agora: Date) =>
  new ErroDeDominio('bloqueado', `Login bloqueado até ${ate.toISOString()}.`, undefined, {
    retryAfterSegundos: Math.ceil((ate.getTime() - agora.getTime()) / 1000),
  });

/**
 * Lua setting `fim` to the end (ms) of the unknown e-mail's lock kept at `chave`, 0 when none;
 * `agora` is the attempt's start. The key keeps its end; one an earlier version wrote holds '1',
 * its end then read from its time left.
 */
const fimDoBloqueioEmLua = (chave: string, agora: string) => `
local v = redis.call('GET', ${chave})
local fim = 0
if v == '1' then fim = tonumber(${agora}) + redis.call('PTTL', ${chave}) elseif v then fim = tonumber(v) or 0 end`;

/**
 * An e-mail no user has is locked as a user's login is (five failures, the fifth answering 401,
 * then 423 for 15 minutes): otherwise a known e-mail answered 423 from its sixth attempt and an
 * unknown one never did, telling who has an account. Counted in Redis under the e-mail's digest
 * (no address kept), in one script so that a burst is counted as a user's is. The lock keeps its
 * end as a user's row does (the locking attempt's start plus BLOQUEIO_MS, to the millisecond), so
 * every 423 names the same instant: one computed from the time left would move from call to call,
 * and tell an unknown e-mail from a user's. Answers that end when already locked (the attempt is
 * not counted), else 0.
 */
const FALHA_DE_DESCONHECIDO = `${fimDoBloqueioEmLua('KEYS[2]', 'ARGV[4]')}
if fim > tonumber(ARGV[4]) then return fim end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], tostring(tonumber(ARGV[4]) + tonumber(ARGV[3])), 'PX', ARGV[3])
end
return 0`;

const FIM_DO_BLOQUEIO_DE_DESCONHECIDO = `${fimDoBloqueioEmLua('KEYS[1]', 'ARGV[1]')}
return fim`;

/**
 * The digest of `email` as the login's schema hands it over (trimmed, NFC, lower case: one address,
 * one count), which Redis keys and logs name instead of the address.
 */
const digestoDoEmail = (email: string) => createHash('sha256').update(email).digest('hex');

const chavesDoDesconhecido = (email: string) => {
  const base = `${config().queuePrefix}:identity:login-desconhecido:${digestoDoEmail(email)}`;
  return { falhas: `${base}:falhas`, bloqueio: `${base}:bloqueio` };
};

/** When the lock of an unknown e-mail ends (ms; 0 or past: none). */
const fimDoBloqueioDoDesconhecido = (email: string, agora: Date): Promise<number> =>
  redis('produtor').eval(FIM_DO_BLOQUEIO_DE_DESCONHECIDO, 1, chavesDoDesconhecido(email).bloqueio, agora.getTime()).then(Number);

/**
 * Unknown e-mails' counts and locks while Redis is out of reach, by digest, in this process, under
 * the script's rule: a known e-mail still locks through its row then, and an unknown one that
 * never did would tell who has an account. A lock set here holds to its end after Redis returns.
 * Bounded: when full, what has expired goes, and a new e-mail is not counted rather than a lock
 * dropped (a flood of made-up e-mails must not lift one). Per process: behind several, an attempt
 * that reaches another process is not counted there (docs/decisoes.md).
 */
const desconhecidosSemRedis = new Map<string, { falhas: number; fim: number; expiraEm: number }>();
export const LIMITE_SEM_REDIS = { emails: 10_000 };

/** The entry of `email` still in force at `t`. */
function semRedis(email: string, t: number) {
  const e = desconhecidosSemRedis.get(digestoDoEmail(email));
  return e && e.expiraEm > t ? e : undefined;
}

/** FALHA_DE_DESCONHECIDO's rule, in this process: the lock's end when already locked, else 0. */
function falhaDoDesconhecidoSemRedis(email: string, agora: Date): number {
  const t = agora.getTime();
  const e = semRedis(email, t);
  if (e && e.fim > t) return e.fim;
  const falhas = (e?.falhas ?? 0) + 1;
  const novo =
    falhas >= FALHAS_ATE_BLOQUEIO ? { falhas: 0, fim: t + BLOQUEIO_MS, expiraEm: t + BLOQUEIO_MS } : { falhas, fim: 0, expiraEm: e?.expiraEm ?? t + CONTAGEM_DE_FALHAS_MS };
  if (!e && desconhecidosSemRedis.size >= LIMITE_SEM_REDIS.emails) {
    for (const [chave, v] of desconhecidosSemRedis) if (v.expiraEm <= t) desconhecidosSemRedis.delete(chave);
    if (desconhecidosSemRedis.size >= LIMITE_SEM_REDIS.emails) return 0;
  }
  desconhecidosSemRedis.set(digestoDoEmail(email), novo);
  return 0;
}

/** The lock of an unknown e-mail, before its (slow) password check, as a user's is read first. */
async function conferirBloqueioDoDesconhecido(email: string, agora: Date): Promise<void> {
  const fim = Math.max(await fimDoBloqueioDoDesconhecido(email, agora).catch(() => 0), semRedis(email, agora.getTime())?.fim ?? 0);
  if (fim > agora.getTime()) throw bloqueado(new Date(fim), agora);
}

/**
 * Counts a failure of an unknown e-mail (`agora`: the attempt's start): 401, or 423 when a lock was
 * set meanwhile. Redis out of reach: counted in this process.
 */
async function falhaDoDesconhecido(email: string, agora: Date): Promise<never> {
  const { falhas, bloqueio } = chavesDoDesconhecido(email);
  const local = semRedis(email, agora.getTime());
  if (local && local.fim > agora.getTime()) throw bloqueado(new Date(local.fim), agora);
  const fim = await redis('produtor')
    .eval(FALHA_DE_DESCONHECIDO, 2, falhas, bloqueio, CONTAGEM_DE_FALHAS_MS, FALHAS_ATE_BLOQUEIO, BLOQUEIO_MS, agora.getTime())
    .then(Number, () => falhaDoDesconhecidoSemRedis(email, agora));
  if (fim > 0) throw bloqueado(new Date(fim), agora);
  throw credenciaisInvalidas();
}

/** `unlock-login` refused: nothing was changed. */
export class DesbloqueioRecusado extends Error {}

export interface Desbloqueio {
  email: string;
  /** the user of that e-mail, or null for an e-mail no user has */
  usuario_id: string | null;
  estava_bloqueado: boolean;
}

/**
 * `suite unlock-login <email>`: lifts the login lock of `email` and restarts its count of failures,
 * as a master's new password does, but without one. Anyone may lock a login (it is public), the
 * masters' among them: when every master is locked out, this is the way back in without SQL. A
 * user's lock is in its row, so Redis out of reach does not stop it; an e-mail no user has is
 * unlocked alike, in Redis.
 */
export async function desbloquearLogin(dado: string): Promise<Desbloqueio> {
  const { value: email, error } = emailValido().required().validate(dado);
  if (error) throw new DesbloqueioRecusado(`not an e-mail address: ${error.message}`);
  const agora = new Date();
  const u = await Usuario.findOne({ where: porEmail(email), attributes: ['id'] });
  let estava_bloqueado: boolean;
  const { falhas, bloqueio } = chavesDoDesconhecido(email);
  if (u) {
    estava_bloqueado = await desbloquearUsuario(u.id);
    // the count the address had before it was a user's would be back if the user is removed: gone
    // too, when Redis answers within a moment
    await esperarRedis('produtor', 2000)
      .then(() => redis('produtor').del(falhas, bloqueio))
      .catch(() => undefined);
  } else {
    await esperarRedis();
    estava_bloqueado = (await fimDoBloqueioDoDesconhecido(email, agora)) > agora.getTime();
    await redis('produtor').del(falhas, bloqueio);
  }
  // lifting a security lock is said where operators look, the address by its digest (as Redis keeps it)
  log.warn({ email_sha256: digestoDoEmail(email), usuario_id: u?.id ?? null, estava_bloqueado }, 'login desbloqueado pelo comando unlock-login');
  return { email, usuario_id: u?.id ?? null, estava_bloqueado };
}

/** The user's password as the login read it before checking it: its hash, and when it last changed. */
interface SenhaLida {
  hash: string | null;
  trocadaEm: Date | null;
}

/**
 * Decides a login whose password was checked (`confere`, against `lida`), under the user's row
 * lock: a lock set by an attempt that finished meanwhile holds (423, even for the right password),
 * and simultaneous wrong attempts are each counted, so a burst cannot dodge the lockout. A lock
 * that has ended, or a count whose first failure is CONTAGEM_DE_FALHAS_MS old, starts a new count.
 * A password replaced meanwhile makes the one checked a wrong one: else a login racing the change
 * would get a token of the change's second, which the change does not cut off
 * (autenticadorDoIdentity), on the old password. A new password moves
 * `tokens_validos_desde`; the same one hashed again by a concurrent login (`novoHash`) does not,
 * and is still the password checked. `novoHash`, the password hashed again at today's cost,
 * replaces the one checked on success, unless another login already did.
 */
async function decidir(id: string, lida: SenhaLida, confere: boolean, agora: Date, novoHash?: string): Promise<Usuario> {
  const { u, entrou } = await banco('identity').transaction(async (transaction) => {
    const u = await Usuario.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
    if (!u) throw credenciaisInvalidas();
    if (u.bloqueado_ate && u.bloqueado_ate > agora) throw bloqueado(u.bloqueado_ate, agora);
    const mesmoHash = u.senha_hash === lida.hash;
    const mesmaSenha = mesmoHash || (u.senha_hash !== null && u.tokens_validos_desde?.getTime() === lida.trocadaEm?.getTime());
    if (confere && mesmaSenha) {
      const entrada = { ...SEM_BLOQUEIO, ultimo_login_em: agora, ...(novoHash && mesmoHash && { senha_hash: novoHash }) };
      return { u: await u.update(entrada, { transaction }), entrou: true };
    }
    const primeira = u.primeira_falha_de_login_em;
    const contando = !u.bloqueado_ate && primeira !== null && agora.getTime() - primeira.getTime() < CONTAGEM_DE_FALHAS_MS;
    const falhas = (contando ? u.falhas_de_login : 0) + 1;
    const falhou =
      falhas >= FALHAS_ATE_BLOQUEIO
        ? { ...SEM_BLOQUEIO, bloqueado_ate: new Date(agora.getTime() + BLOQUEIO_MS) }
        : { falhas_de_login: falhas, primeira_falha_de_login_em: contando ? primeira : agora, bloqueado_ate: null };
    return { u: await u.update(falhou, { transaction }), entrou: false };
  });
  if (!entrou) throw credenciaisInvalidas();
  return u;
}

/** User login: token, lockout after repeated failures, `ultimo_login_em` on success. */
export async function entrar(email: string, senha: string): Promise<RespostaDeToken & { usuario: UsuarioJson }> {
  const usuario = await Usuario.findOne({
    where: porEmail(email),
    include: [
      { model: Setor, as: 'setor' },
      { model: Cargo, as: 'cargo' },
      { model: Funcao, as: 'funcao' },
    ],
  });
  const agora = new Date();
  // a lock already known answers before the costly password check
  if (usuario?.bloqueado_ate && usuario.bloqueado_ate > agora) throw bloqueado(usuario.bloqueado_ate, agora);
  if (!usuario) await conferirBloqueioDoDesconhecido(email, agora);
  const confere = await senhaConfere(senha, usuario?.senha_hash ?? null);
  if (!usuario) return falhaDoDesconhecido(email, agora);
  // a hash of another cost is made again with the password just proven: only a right password pays,
  // before the row is locked (the hash is slow on purpose). With every hash's turn taken, it is left
  // for a later login: the password is proven, and a 429 would refuse the user for the hashes' load
  const novoHash = confere && hashDesatualizado(usuario.senha_hash!) ? await hashDeSenha(senha).catch(semVezParaOHash) : undefined;
  const decidido = await decidir(usuario.id, { hash: usuario.senha_hash, trocadaEm: usuario.tokens_validos_desde }, confere, agora, novoHash);
  // the token and the answer say what the row holds as the login was decided, not what it held
  // before the slow password check: a master demoted meanwhile gets no master token (with the
  // user's setor, cargo and funcao read before, for the answer)
  usuario.set(decidido.get({ plain: true }), { raw: true });
  const segundos = config().identity.tokenUsuarioSegundos;
  const access_token = assinar(
    { tipo: 'usuario', master: eMaster(usuario), nome: usuario.nome, email: usuario.email, perfil: usuario.perfil },
    usuario.id,
    segundos,
  );
  return { access_token, token_type: 'Bearer', expires_in: segundos, usuario: usuarioJson(usuario) };
}

/** The re-hash of a proven password refused for want of a turn (senhas.ts) is left undone; anything else is thrown. */
function semVezParaOHash(err: unknown): undefined {
  if (err instanceof ErroDeDominio && err.tipo === 'limite_excedido') return undefined;
  throw err;
}

export const hashDoSegredo = (segredo: string) => createHash('sha256').update(segredo).digest('hex');

/**
 * Client credentials: an active application gets a token whose `sub` is its id. Decided and signed
 * under a shared lock of its row, as a login is under the user's: a new secret or a switch-off
 * committed first is seen (401), one made meanwhile waits for the token. Else a request that read
 * the old secret just before a renewal would get a token of the renewal's second, which the
 * renewal does not cut off (autenticadorDoIdentity).
 */
export async function tokenDeAplicativo(clientId: string, clientSecret: string): Promise<RespostaDeToken> {
  const recebido = Buffer.from(hashDoSegredo(clientSecret), 'hex');
  return banco('identity').transaction(async (transaction): Promise<RespostaDeToken> => {
    const app = await Aplicativo.findOne({ where: { id: clientId, ativo: true }, transaction, lock: transaction.LOCK.SHARE });
    const esperado = Buffer.from(app?.segredo_hash ?? '0'.repeat(64), 'hex');
    if (!app || !timingSafeEqual(esperado, recebido)) throw naoAutenticado('client_id ou client_secret inválidos.');
    const segundos = config().identity.tokenAplicativoSegundos;
    return { access_token: assinar({ tipo: 'aplicativo', nome: app.nome }, app.id, segundos), token_type: 'Bearer', expires_in: segundos };
  });
}

/**
 * Identity's own routes (DESIGN §3): besides the token's signature, the user or application it
 * names must still exist, active, and a user's master comes from its row, not from the token. A
 * token outlives its holder's removal or demotion (8 hours for a user) wherever it is only verified;
 * here, where users and applications are administered, a removed master must not create another.
 * Likewise a token issued before its holder's `tokens_validos_desde` (the last password change,
 * secret renewal or switch-off) is refused here: a stolen token, or one got with a leaked secret,
 * stops at once.
 */
export function autenticadorDoIdentity(): Autenticador {
  const verificar = autenticadorLocal(jwks);
  return async (token) => {
    const p = await verificar(token);
    // `iat` counts whole seconds: a token of the change's own second is taken, else a login right
    // after the change would get a token refused at once. One issued in that second before the
    // change is all the rule leaves
    const anterior = (desde: Date | null) => desde !== null && p.emitidoEm < Math.floor(desde.getTime() / 1000);
    if (p.tipo === 'usuario') {
      const u = await usuarioTitular(p.sub);
      if (!u) throw naoAutenticado('O usuário do token foi removido.');
      if (anterior(u.tokens_validos_desde)) throw naoAutenticado('O token é anterior à última troca de senha do usuário.');
      return { ...p, master: eMaster({ master: u.master === 1, email: u.email }) };
    }
    const app = await aplicativoTitular(p.sub);
    if (app?.ativo !== 1) throw naoAutenticado('O aplicativo do token foi removido ou desativado.');
    if (anterior(app.tokens_validos_desde)) throw naoAutenticado('O token é anterior à última renovação do segredo ou desativação do aplicativo.');
    return p;
  };
}
