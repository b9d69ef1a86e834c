import { ConfigError } from '../config';
import { DefinicaoDeFila } from './fila';
import { filaFilesColaboradorSync } from './files-colaborador-sync';
import { filaFilesContagem } from './files-contagem';
import { filaFilesLimpeza } from './files-limpeza';
import { filaHubAplicativoSync } from './hub-aplicativo-sync';
import { filaHubColaboradorSync } from './hub-colaborador-sync';
import { filaHubContagem } from './hub-contagem';
import { filaHubEntrega } from './hub-entrega';
import { filaHubRetencao } from './hub-retencao';
import { filaIdentityOutbox } from './identity-outbox';
import { filaIntranetColaboradorSync } from './intranet-colaborador-sync';
import { filaLeadsColaboradorSync } from './leads-colaborador-sync';
import { filaLeadsContagem } from './leads-contagem';
import { filaLeadsImportacao } from './leads-importacao';
import { filaSalesAnexo } from './sales-anexo';
import { filaSalesColaboradorSync } from './sales-colaborador-sync';
import { filaSalesContagem } from './sales-contagem';
import { filaSalesTransferencia } from './sales-transferencia';

/** Every queue of the suite, in one place (the dashboard and `suite worker` read this list). */
export const FILAS: DefinicaoDeFila[] = [
  filaIdentityOutbox,
  filaIntranetColaboradorSync,
  filaHubEntrega,
  filaHubAplicativoSync,
  filaHubRetencao,
  filaHubColaboradorSync,
  filaHubContagem,
  filaLeadsImportacao,
  filaLeadsContagem,
  filaLeadsColaboradorSync,
  filaSalesAnexo,
  filaSalesTransferencia,
  filaSalesContagem,
  filaSalesColaboradorSync,
  filaFilesLimpeza,
  filaFilesContagem,
  filaFilesColaboradorSync,
];

export function definicaoDaFila(nome: string): DefinicaoDeFila {
  const def = FILAS.find((f) => f.nome === nome);
  if (!def) throw new ConfigError(`unknown queue "${nome}"; known: ${FILAS.map((f) => f.nome).join(', ')}`);
  return def;
}
