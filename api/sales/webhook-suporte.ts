import { config } from '../../config';
import { logger } from '../../lib/logger';
import { EstadoDaMarca, umaVez } from '../../lib/redis';
import { emAndamento } from '../shared/errors';
import { ChamadaDeWebhook, SistemaDoWebhook, TOLERANCIA_DO_CARIMBO_S } from './config-system';
import { registrarEventoDoSuporte } from './registro';
import { lerEventoDoSuporte } from './suporte';

/**
 * The chat platform's webhook deliveries (DESIGN §7), each recorded once: a signed one is marked in
 * Redis for its signature's window, so that a replay, which could undo what was done since, changes
 * nothing (docs/decisoes.md).
 */

/** A signed delivery, once its signature is verified: its mark's Redis key and how long to keep it. */
export interface EntregaAssinada {
  chave: string;
  /** until the timestamp leaves the window on this clock (the signature is refused after it), and TOLERANCIA more for a clock behind */
  validadeMs: number;
}

/**
 * The mark of a delivery that `autenticarWebhook` accepted with a signature; null for a system
 * without an HMAC secret (nothing to tell a replay apart by, and no Redis call).
 */
export function entregaAssinada(sistema: SistemaDoWebhook, chamada: ChamadaDeWebhook, agora = Date.now()): EntregaAssinada | null {
  if (!sistema.segredoHmac || !chamada.assinatura) return null;
  // a timestamp is taken from TOLERANCIA before it to TOLERANCIA after it: the mark lasts to the
  // end of that, so a delivery first seen early in its window cannot be replayed late in it. The
  // end is read on this process's clock, and each process judges the window on its own: the mark
  // outlasts it by TOLERANCIA more, so a process whose clock is behind this one's by up to that
  // still finds the mark while it takes the timestamp
  const fimDaJanela = (Number(chamada.carimbo) + TOLERANCIA_DO_CARIMBO_S) * 1000;
  return {
    chave: `${config().queuePrefix}:sales:assinatura:${sistema.id}:${chamada.assinatura.trim()}`,
    validadeMs: Math.max(fimDaJanela - agora, 0) + TOLERANCIA_DO_CARIMBO_S * 1000,
  };
}

/** Seconds a copy of a delivery still being recorded is told to wait (Retry-After): a recording takes well under that. */
const ESPERA_DA_COPIA_EM_ANDAMENTO_S = 2;

/**
 * Runs `registrar` for a signed delivery seen for the first time. A copy that arrives while the
 * first is still being recorded answers 503 with Retry-After (the first may yet fail, and then its
 * mark is removed: a 200 would have lost the event); one that arrives once it was recorded answers
 * `repetida` and does nothing, since an event applied again may undo what was done since (a
 * status the team corrected, a hand-over). A failed recording removes its mark, so the platform's
 * retry of it is taken. Unsigned: runs as it comes, without a Redis call.
 */
function registrarUmaVez<T>(entrega: EntregaAssinada | null, repetida: T, registrar: () => Promise<T>): Promise<T> {
  if (!entrega) return registrar();
  const seRepetida = (estado: EstadoDaMarca) => {
    if (estado === 'em-andamento') {
      logger('sales-webhook').info({ chave: entrega.chave }, 'entrega assinada repetida enquanto a primeira é gravada: tentar de novo');
      throw emAndamento('Esta entrega assinada ainda está sendo gravada; tente de novo (Retry-After).', ESPERA_DA_COPIA_EM_ANDAMENTO_S);
    }
    logger('sales-webhook').info({ chave: entrega.chave }, 'entrega assinada repetida ignorada');
    return repetida;
  };
  return umaVez(entrega.chave, entrega.validadeMs, seRepetida, registrar);
}

/** A signed delivery recorded before within its window: 200, nothing done. */
const ENTREGA_REPETIDA = { conversa_id: null, mensagens_novas: 0, ignorado: 'entrega repetida: esta assinatura já foi recebida' };

/** POST /webhooks/suporte/{config_id}: the event of a system `autenticarWebhook` accepted, recorded once per signed delivery. */
export function receberEventoDoSuporte(sistema: SistemaDoWebhook, entrega: EntregaAssinada | null, corpo: unknown) {
  return registrarUmaVez(entrega, ENTREGA_REPETIDA, () => registrarEventoDoSuporte(sistema, lerEventoDoSuporte(corpo)));
}
