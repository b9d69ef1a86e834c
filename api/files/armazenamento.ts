import path from 'node:path';
import { Readable } from 'node:stream';
import { config } from '../../config';
import { abandonoDeParcialMs, ArmazenamentoLocal } from './armazenamento-local';

/**
 * Where the bytes of the files live (DESIGN §7), keyed by the file's id. Local disk is the embedded
 * default; an S3-compatible store implements the same operations (a multipart upload fed by the
 * stream, GetObject's body, DeleteObject, HeadBucket; the mark as one object outside the ids' keys)
 * and is installed with `usarArmazenamento`.
 */
export interface Armazenamento {
  /**
   * Stores what `origem` yields under `chave`, replacing nothing (keys are new ids). Resolves once
   * the bytes are durable; when `origem` or the store fails, nothing stays stored under `chave`
   * nor elsewhere, and the error is rethrown as it came.
   */
  gravar(chave: string, origem: Readable): Promise<void>;
  /** The stored bytes as a stream, or null when nothing is stored under `chave`. */
  ler(chave: string): Promise<Readable | null>;
  /** Removes the bytes; removing what is not there is not an error. */
  remover(chave: string): Promise<void>;
  /** Once, on start: creates what the store needs and clears what a crash may have left (and keeps clearing it). */
  preparar(): Promise<void>;
  /** Resolves when the store can be written (readiness). */
  pronto(): Promise<void>;
  /** The mark kept in the store (api/files/marca.ts), or null when it has none. */
  marca(): Promise<string | null>;
  /** Keeps `marca` in the store, durably. */
  marcar(marca: string): Promise<void>;
}

let instalado: Armazenamento | undefined;

/**
 * How long after its start an upload that has not finished never will (FILES_PRAZO_DO_ENVIO_S, with
 * room for the store to finish and the row to be written): its bytes are then the sweep's when no
 * row took them (arquivos.ts), and a partial file on the local disk is taken as abandoned.
 */
export const vencimentoDoEnvioMs = () => abandonoDeParcialMs(config().files.prazoDoEnvioMs);

/** The service's storage: the installed one, else the local disk at FILES_DIRETORIO. */
export function armazenamento(): Armazenamento {
  const diretorio = path.resolve(config().files.diretorio);
  if (!instalado || (instalado instanceof ArmazenamentoLocal && instalado.diretorio !== diretorio)) {
    instalado = new ArmazenamentoLocal(diretorio, vencimentoDoEnvioMs());
  }
  return instalado;
}

/** Replaces the storage (an S3-compatible store; a test double). */
export function usarArmazenamento(a: Armazenamento): void {
  instalado = a;
}
