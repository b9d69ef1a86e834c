import { Processor, Worker } from 'bullmq';
import { FILAS } from '../queues';
import { processarFilesColaboradorSync } from './files-colaborador-sync';
import { processarFilesContagem } from './files-contagem';
import { processarFilesLimpeza } from './files-limpeza';
import { processarHubAplicativoSync } from './hub-aplicativo-sync';
import { processarHubColaboradorSync } from './hub-colaborador-sync';
import { processarHubContagem } from './hub-contagem';
import { processarHubEntrega, prepararWorkerDeEntregas } from './hub-entrega';
import { processarHubRetencao } from './hub-retencao';
import { processarIdentityOutbox } from './identity-outbox';
import { processarIntranetColaboradorSync } from './intranet-colaborador-sync';
import { processarLeadsColaboradorSync } from './leads-colaborador-sync';
import { processarLeadsContagem } from './leads-contagem';
import { processarLeadsImportacao } from './leads-importacao';
import { processarSalesAnexo } from './sales-anexo';
import { processarSalesColaboradorSync } from './sales-colaborador-sync';
import { processarSalesContagem } from './sales-contagem';
import { processarSalesTransferencia } from './sales-transferencia';

/** One processor per queue. */
export const PROCESSADORES: Record<string, Processor> = {
  'identity-outbox': processarIdentityOutbox,
  'intranet-colaborador-sync': processarIntranetColaboradorSync,
  'hub-entrega': processarHubEntrega,
  'hub-aplicativo-sync': processarHubAplicativoSync,
  'hub-retencao': processarHubRetencao,
  'hub-colaborador-sync': processarHubColaboradorSync,
  'hub-contagem': processarHubContagem,
  'leads-importacao': processarLeadsImportacao,
  'leads-contagem': processarLeadsContagem,
  'leads-colaborador-sync': processarLeadsColaboradorSync,
  'sales-anexo': processarSalesAnexo,
  'sales-transferencia': processarSalesTransferencia,
  'sales-contagem': processarSalesContagem,
  'sales-colaborador-sync': processarSalesColaboradorSync,
  'files-limpeza': processarFilesLimpeza,
  'files-contagem': processarFilesContagem,
  'files-colaborador-sync': processarFilesColaboradorSync,
};

/** What a queue's worker needs beyond its processor, set up as each one starts. */
export const AO_INICIAR_WORKER: Record<string, (worker: Worker) => void> = {
  'hub-entrega': prepararWorkerDeEntregas,
};

/** Start-up fails when a queue has no processor or a processor has no queue (immich's rule). */
export function conferirProcessadores(): void {
  const filas = new Set(FILAS.map((f) => f.nome));
  const semProcessador = [...filas].filter((f) => !PROCESSADORES[f]);
  const semFila = Object.keys(PROCESSADORES).filter((p) => !filas.has(p));
  if (semProcessador.length || semFila.length) {
    throw new Error(`queues without processor: [${semProcessador.join(', ')}]; processors without queue: [${semFila.join(', ')}]`);
  }
}
