import { logger, umaVezPorMinuto } from '../../lib/logger';

/**
 * How far ahead of this server's clock a time the platforms send may be and still count (clocks
 * drift apart). Kept as they say, a time far ahead would hold every later event of its
 * conversation, message or phone out for good, and a message of it first in every listing.
 */
export const ADIANTAMENTO_ACEITO_MS = 10 * 60_000;

const log = logger('sales-webhook');

/** A platform sending times that far ahead has its order of events turned off: said once a minute while it lasts. */
const dizerAdiantado = umaVezPorMinuto((ms: number, campo: string) =>
  log.warn({ campo, adiantado_ms: ms - Date.now() }, 'tempo da plataforma adiantado demais em relação a este servidor: não ordena os eventos'),
);

/** Whether the moment `ms` of the platform's `campo` is further ahead than ADIANTAMENTO_ACEITO_MS (then no usable time). */
export function adiantadoDemais(ms: number, campo: string): boolean {
  const adiantado = ms > Date.now() + ADIANTAMENTO_ACEITO_MS;
  if (adiantado) dizerAdiantado(ms, campo);
  return adiantado;
}

/** The moment `ms` of the platform's `campo`, brought back to ADIANTAMENTO_ACEITO_MS ahead at most (order kept up to there). */
export function noMaximoAdiantado(ms: number, campo: string): number {
  return adiantadoDemais(ms, campo) ? Date.now() + ADIANTAMENTO_ACEITO_MS : ms;
}
