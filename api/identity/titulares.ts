import type IORedis from 'ioredis';
import { config } from '../../config';
import { CacheComPrazo } from '../../lib/cache';
import { banco, lerLinhas } from '../../lib/database';
import { logger } from '../../lib/logger';
import { novaConexaoRedis, redis } from '../../lib/redis';

/**
 * The holders of tokens, as identity's own routes check them on every call (autenticadorDoIdentity):
 * kept in the process, so that a call costs no database read, and forgotten on every change of
 * their rows made through identity (`titularMudou`): in the process that made it as soon as it
 * commits, before its answer leaves, and in every other identity process by a Redis message it has
 * been sent by then. A process keeps holders only while it is subscribed to those messages: one whose
 * subscription is down could miss a change, so until it is back it reads each holder from the
 * database, and then starts empty. What a change does not reach at once: another process between
 * the message's sending and its arrival (a round trip to Redis), and a row changed by hand in SQL,
 * seen within PRAZO_MS.
 */
export interface UsuarioTitular {
  master: number;
  email: string;
  tokens_validos_desde: Date | null;
}

export interface AplicativoTitular {
  ativo: number;
  tokens_validos_desde: Date | null;
}

export type TipoDeTitular = 'usuario' | 'aplicativo';

export const PRAZO_MS = 60_000;

const log = logger('identity-titulares');

/** A holder's key here, and the message that forgets it in every process. */
const chaveDoTitular = (tipo: TipoDeTitular, id: string) => `${tipo}:${id}`;

/** by chaveDoTitular; null: no live row (a removed holder, or an id never issued) */
const titulares = new CacheComPrazo<string, UsuarioTitular | AplicativoTitular | null>(() => PRAZO_MS);

let assinatura: IORedis | undefined;
let assinado = false;

/** One channel per environment, as the queues' keys (QUEUE_PREFIX): tests and deployments sharing a Redis do not cross. */
const canal = () => `${config().queuePrefix}:identity:titulares`;

function assinar(): void {
  if (assinatura) return;
  // named with the process: an operator (CLIENT LIST) tells each identity process's subscription apart
  const c = (assinatura = novaConexaoRedis('worker', `identity:titulares:${process.pid}`));
  // each message is one holder's key (chaveDoTitular)
  c.on('message', (_canal: string, mensagem: string) => titulares.esquecer(mensagem));
  // subscribed once Redis has answered SUBSCRIBE, on every connection (ioredis subscribes again on
  // its own too: asking twice does no harm); what was kept before may have missed a change
  c.on('ready', () => {
    c.subscribe(canal()).then(
      () => {
        titulares.esquecer();
        assinado = true;
      },
      // refused (a Redis user without this channel): every holder read from the database, said once a connection
      (err: Error) => log.warn({ err, canal: canal() }, 'assinatura do canal dos titulares recusada: cada chamada lê o titular no banco'),
    );
  });
  c.on('close', () => {
    assinado = false;
    titulares.esquecer();
  });
  // closed for good (the process's shutdown): a later start in this process subscribes anew
  c.on('end', () => {
    if (assinatura === c) assinatura = undefined;
  });
}

const PARA_LER: Record<TipoDeTitular, string> = {
  usuario: 'SELECT master, email, tokens_validos_desde FROM usuario WHERE id = ? AND deletado_em IS NULL',
  aplicativo: 'SELECT ativo, tokens_validos_desde FROM aplicativo WHERE id = ? AND deletado_em IS NULL',
};

async function lerTitular<T extends UsuarioTitular | AplicativoTitular>(tipo: TipoDeTitular, id: string): Promise<T | null> {
  assinar();
  // a prepared statement of the fast pool, not the ORM (which cost half the read)
  const ler = async () => (await lerLinhas<T>(banco('identity'), PARA_LER[tipo], [id]))[0] ?? null;
  // a load that a change or a lost subscription overtook is not kept (CacheComPrazo's generation)
  return assinado ? ((await titulares.obterOuCarregar(chaveDoTitular(tipo, id), ler)) as T | null) : ler();
}

/** Whether this process keeps holders now: subscribed, its subscription confirmed by Redis. */
export const guardaTitulares = () => assinado;

export const usuarioTitular = (id: string) => lerTitular<UsuarioTitular>('usuario', id);
export const aplicativoTitular = (id: string) => lerTitular<AplicativoTitular>('aplicativo', id);

/**
 * To be called once a change of a user's or an application's row has committed, before the change
 * is answered. Forgotten here at once, then in the other processes: a Redis out of reach is
 * logged, not thrown, since the change itself is made; those processes keep the holder for at most
 * PRAZO_MS, unless their own subscription fell with it.
 */
export async function titularMudou(tipo: TipoDeTitular, id: string): Promise<void> {
  const mensagem = chaveDoTitular(tipo, id);
  titulares.esquecer(mensagem);
  try {
    await redis().publish(canal(), mensagem);
  } catch (err) {
    log.warn({ err, titular: mensagem }, 'mudança de titular não avisada aos outros processos do identity');
  }
}
