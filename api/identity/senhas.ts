import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { config } from '../../config';
import { limiteDeConcorrencia } from '../../lib/concorrencia';
import { ErroDeDominio } from '../shared/errors';

/**
 * Passwords are kept as scrypt hashes with a random salt (OWASP's N=2^14, r=8, p=5 profile):
 * `scrypt$N$r$p$salt$hash`, base64url. The parameters travel with the hash so they can grow later
 * (a login makes a hash of other parameters again: hashDesatualizado); N comes from
 * IDENTITY_SENHA_CUSTO (default 14), which tests lower to keep the suite fast.
 */
const custoAtual = () => 2 ** config().identity.senhaCusto;
const R = 8;
const P = 5;
const TAMANHO = 32;

/**
 * scrypt runs on libuv's thread pool (4 threads by default), which every service in the process
 * shares for file reads and writes and DNS lookups: at most HASHES_SIMULTANEOS hashes run at once,
 * and past HASHES_NA_ESPERA waiting one is refused (429, Retry-After) instead of queued. Every login
 * costs a hash, whether its e-mail exists or not, so a flood of them from many addresses (each
 * within its own rate limit) would otherwise hold the pool and stall uploads and downloads.
 */
export const HASHES_SIMULTANEOS = 2;
export const HASHES_NA_ESPERA = 32;
const naVezDoHash = limiteDeConcorrencia(HASHES_SIMULTANEOS, {
  naEspera: HASHES_NA_ESPERA,
  recusa: () => new ErroDeDominio('limite_excedido', 'Muitas senhas sendo verificadas agora; tente de novo em instantes.', undefined, { retryAfterSegundos: 1 }),
});

/** One scrypt derivation, outside the turn (its callers hold one). */
const scryptDe = (senha: string, sal: Buffer, n: number, r: number, p: number): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(senha.normalize('NFKC'), sal, TAMANHO, { N: n, r, p, maxmem: 256 * n * r }, (err, chave) => (err ? reject(err) : resolve(chave))),
  );

const derivar = (senha: string, sal: Buffer, n: number, r: number, p: number): Promise<Buffer> =>
  naVezDoHash(() => scryptDe(senha, sal, n, r, p));

export async function hashDeSenha(senha: string): Promise<string> {
  const sal = randomBytes(16);
  const custo = custoAtual();
  const chave = await derivar(senha, sal, custo, R, P);
  return ['scrypt', custo, R, P, sal.toString('base64url'), chave.toString('base64url')].join('$');
}

/**
 * Whether a hash was made with other parameters than a new one gets (IDENTITY_SENHA_CUSTO changed
 * since): the login that proves the password makes it again (login.ts). Else a raised cost reached
 * only passwords changed after it, and the check of an unknown e-mail, at the new cost, took longer
 * than a known one's: the e-mails in use could be told by timing.
 */
export function hashDesatualizado(hash: string): boolean {
  const [algoritmo, n, r, p] = hash.split('$');
  return algoritmo !== 'scrypt' || Number(n) !== custoAtual() || Number(r) !== R || Number(p) !== P;
}

export async function senhaConfere(senha: string, hash: string | null): Promise<boolean> {
  if (!hash) {
    // same work as a real check, so a missing user or password cannot be told apart by timing
    await derivar(senha, Buffer.alloc(16), custoAtual(), R, P);
    return false;
  }
  const [algoritmo, n, r, p, sal, esperado] = hash.split('$');
  if (algoritmo !== 'scrypt') return false;
  const esperadoBuf = Buffer.from(esperado, 'base64url');
  // the check and its padding in one turn: a padding refused (429) after a wrong password was found
  // would leave the failure uncounted, a guess the lockout never saw
  return naVezDoHash(async () => {
    const chave = await scryptDe(senha, Buffer.from(sal, 'base64url'), Number(n), Number(r), Number(p));
    const confere = chave.length === esperadoBuf.length && timingSafeEqual(chave, esperadoBuf);
    if (!confere) await completarAteOCustoAtual(senha, Number(n));
    return confere;
  });
}

/**
 * A hash of a lower cost (made before IDENTITY_SENHA_CUSTO was raised, its user not logged in
 * since) is checked in a fraction of an unknown e-mail's time: a wrong password for it is followed
 * by throwaway work of the difference, N, 2N, ... up to half the current cost (scrypt's time grows
 * with N), so the e-mails in use are not told apart by timing. A right one is hashed again anyway.
 */
async function completarAteOCustoAtual(senha: string, n: number): Promise<void> {
  if (!(n > 1) || !Number.isInteger(Math.log2(n))) return;
  for (let feito = n; feito < custoAtual(); feito *= 2) await scryptDe(senha, Buffer.alloc(16), feito, R, P);
}
