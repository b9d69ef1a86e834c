import { config } from '../../config';
import { comCausa } from '../../lib/erros';
import { logger } from '../../lib/logger';
import { Arquivo } from '../../models/files';
import { TokenRecusado } from '../../queues/fila';
import { autenticadorRemoto } from '../shared/auth';
import { ErroDeDominio } from '../shared/errors';
import { lerDoIdentitySeExistir } from '../shared/leitura-do-identity';
import { deletarArquivo } from './arquivos';

const log = logger('files');

/** The removal did not start: identity did not say the application is gone. Nothing was removed. */
export class RemocaoRecusada extends Error {}

/**
 * Only identity's 404 says the application is gone: a deactivated one is still found and keeps its
 * files (it may be active again), and an answer that is no answer (identity out of reach, late, the
 * token refused) is never taken for a deletion. The server at IDENTITY_URL must first prove it is
 * the identity that issued the token: the token verifies against that address's key set and names
 * it as its issuer, as every service verifies identity's tokens. Another server answering there (the
 * hub accepts identity's tokens and answers 404 for identity's ids; any server may answer 404 to
 * everything) has other keys or none, and is never sent the token.
 */
async function confirmarQueSaiuDoIdentity(aplicativoId: string, token: string): Promise<void> {
  const naoConfirmou = (err: unknown) => {
    const motivo = err instanceof TokenRecusado ? `${err.message}: it takes a master's token` : comCausa(err as Error);
    return new RemocaoRecusada(`identity did not confirm that application ${aplicativoId} is deleted: ${motivo}; nothing was removed`);
  };
  const identity = config().servicos.identity.url;
  let quem;
  try {
    quem = await autenticadorRemoto()(token);
  } catch (err) {
    const motivo =
      err instanceof ErroDeDominio && err.tipo === 'indisponivel'
        ? `its key set (${identity}/.well-known/jwks.json) could not be read${(err.cause as Error | undefined)?.message ? ` (${comCausa(err.cause as Error)})` : ''}`
        : `the token does not verify against the key set of ${identity} (not identity, or the token expired)`;
    throw naoConfirmou(new Error(motivo));
  }
  // identity also answers an application's token, but only a master decides that an application's data may go
  if (quem.tipo !== 'usuario' || !quem.master) {
    throw new RemocaoRecusada(`the token is ${quem.tipo === 'usuario' ? 'of a user who is not a master' : `application ${quem.sub}'s`}: it takes a master's token. Nothing was removed`);
  }
  const lido = await lerDoIdentitySeExistir(`/aplicativo/${encodeURIComponent(aplicativoId)}`, token).catch((err: unknown) => {
    throw naoConfirmou(err);
  });
  if (lido === null) return;
  throw new RemocaoRecusada(
    `application ${aplicativoId} still exists in identity (a deactivated one keeps its files); delete it there first. Nothing was removed`,
  );
}

/** Files removed per page; each one in a transaction of its own (deletarArquivo). */
const LOTE_DA_REMOCAO = 100;

/**
 * `suite remove-app-files <aplicativo_id>`: the files of an application deleted in identity, each
 * removed as its own DELETE /arquivo/{id} removes it (the row marked deleted and the owed bytes in
 * one transaction, the bytes right after), so a stop anywhere leaves whole files and owed bytes for the sweep, and
 * the command run again goes on from there. Page by page, oldest first: a large application never
 * holds one long transaction. A file deleted meanwhile by other means is not counted. Answers how
 * many it removed; `aoProgredir` hears after each page.
 */
export async function removerArquivosDoAplicativoApagado(
  aplicativoId: string,
  token: string,
  aoProgredir: (p: { removidos: number; total: number }) => void = () => undefined,
  lote = LOTE_DA_REMOCAO,
): Promise<number> {
  await confirmarQueSaiuDoIdentity(aplicativoId, token);
  const onde = { aplicativo_id: aplicativoId };
  const total = await Arquivo.count({ where: onde });
  log.info({ aplicativo_id: aplicativoId, total }, 'removendo os arquivos de um aplicativo apagado no identity');
  let removidos = 0;
  try {
    for (;;) {
      // from the start each time: the last page's files are gone from it
      const pagina = await Arquivo.findAll({ attributes: ['id'], where: onde, order: [['criado_em', 'ASC'], ['id', 'ASC']], limit: lote });
      if (!pagina.length) break;
      for (const { id } of pagina) {
        try {
          await deletarArquivo(aplicativoId, id);
          removidos++;
        } catch (err) {
          // deleted meanwhile by its own DELETE: gone, and not this run's
          if (!(err instanceof ErroDeDominio && err.tipo === 'nao_encontrado')) throw err;
        }
      }
      aoProgredir({ removidos, total });
    }
  } catch (err) {
    log.error({ err, aplicativo_id: aplicativoId, removidos }, 'remoção dos arquivos interrompida: o comando pode ser repetido');
    throw err;
  }
  log.info({ aplicativo_id: aplicativoId, removidos }, 'arquivos do aplicativo apagado removidos');
  return removidos;
}
