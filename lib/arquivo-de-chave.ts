import { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../config';

/**
 * A key file an environment variable names, read at start: its PEM and, when `comoChave` reads a
 * key in it, that key (undefined otherwise, for the caller to refuse with what it expected). A file
 * that cannot be read stops the start naming the variable and the file, never the file's contents.
 */
export async function lerArquivoDeChave(
  variavel: string,
  arquivo: string,
  comoChave: (pem: string) => KeyObject,
  dica = '',
): Promise<{ pem: string; chave: KeyObject | undefined }> {
  let pem: string;
  try {
    pem = await readFile(arquivo, 'utf8');
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${variavel}: cannot read ${arquivo} (${(err as NodeJS.ErrnoException).code ?? 'error'})${dica}`);
  }
  try {
    return { pem, chave: comoChave(pem) };
  } catch {
    // crypto's message says nothing useful here, and the file may be a secret
    return { pem, chave: undefined };
  }
}
