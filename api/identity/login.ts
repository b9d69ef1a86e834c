import { createHash, timingSafeEqual } from 'node:crypto';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { Aplicativo, Cargo, Funcao, Setor, Usuario } from '../../models/identity';
import { ErroDeDominio, naoAutenticado } from '../shared/errors';
import { assinar } from './chaves';
import { senhaConfere } from './senhas';
import { eMaster, usuarioJson, UsuarioJson } from './usuarios';

/** DESIGN §3: 5 failures in a row lock the login for 15 minutes. */
export const FALHAS_ATE_BLOQUEIO = 5;
export const BLOQUEIO_MS = 15 * 60_000;

export interface RespostaDeToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

const credenciaisInvalidas = () => naoAutenticado('E-mail ou senha inválidos.');

/**
 * Counts a failed login under a row lock: simultaneous wrong attempts are each counted, so a burst
 * cannot dodge the lockout, and one arriving after the lock was set leaves it alone.
 */
async function registrarFalha(id: string, agora: Date): Promise<void> {
  await banco('identity').transaction(async (transaction) => {
    const u = await Usuario.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE });
    if (!u || (u.bloqueado_ate && u.bloqueado_ate > agora)) return;
    // a lock that has ended starts a new count
    const falhas = (u.bloqueado_ate ? 0 : u.falhas_de_login) + 1;
    const bloqueia = falhas >= FALHAS_ATE_BLOQUEIO;
    await u.update(
      { falhas_de_login: bloqueia ? 0 : falhas, bloqueado_ate: bloqueia ? new Date(agora.getTime() + BLOQUEIO_MS) : null },
      { transaction },
    );
  });
}

/** User login: token, lockout after repeated failures, `ultimo_login_em` on success. */
export async function entrar(email: string, senha: string): Promise<RespostaDeToken & { usuario: UsuarioJson }> {
  const usuario = await Usuario.findOne({
    where: { email },
    include: [
      { model: Setor, as: 'setor' },
      { model: Cargo, as: 'cargo' },
      { model: Funcao, as: 'funcao' },
    ],
  });
  const agora = new Date();
  if (usuario?.bloqueado_ate && usuario.bloqueado_ate > agora) {
    const segundos = Math.ceil((usuario.bloqueado_ate.getTime() - agora.getTime()) / 1000);
    throw new ErroDeDominio('bloqueado', `Login bloqueado até ${usuario.bloqueado_ate.toISOString()}.`, undefined, {
      retryAfterSegundos: segundos,
    });
  }
  const confere = await senhaConfere(senha, usuario?.senha_hash ?? null);
  if (!usuario) throw credenciaisInvalidas();
  if (!confere) {
    await registrarFalha(usuario.id, agora);
    throw credenciaisInvalidas();
  }
  await usuario.update({ falhas_de_login: 0, bloqueado_ate: null, ultimo_login_em: agora });
  const segundos = config().identity.tokenUsuarioSegundos;
  const access_token = assinar(
    { tipo: 'usuario', master: eMaster(usuario), nome: usuario.nome, email: usuario.email },
    usuario.id,
    segundos,
  );
  return { access_token, token_type: 'Bearer', expires_in: segundos, usuario: usuarioJson(usuario) };
}

export const hashDoSegredo = (segredo: string) => createHash('sha256').update(segredo).digest('hex');

/** Client credentials: an active application gets a token whose `sub` is its id. */
export async function tokenDeAplicativo(clientId: string, clientSecret: string): Promise<RespostaDeToken> {
  const app = await Aplicativo.findOne({ where: { id: clientId, ativo: true } });
  const esperado = Buffer.from(app?.segredo_hash ?? '0'.repeat(64), 'hex');
  const recebido = Buffer.from(hashDoSegredo(clientSecret), 'hex');
  if (!app || !timingSafeEqual(esperado, recebido)) throw naoAutenticado('client_id ou client_secret inválidos.');
  const segundos = config().identity.tokenAplicativoSegundos;
  return { access_token: assinar({ tipo: 'aplicativo', nome: app.nome }, app.id, segundos), token_type: 'Bearer', expires_in: segundos };
}
