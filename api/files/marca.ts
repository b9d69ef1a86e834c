import { randomUUID } from 'node:crypto';
import { banco, lerLinhas } from '../../lib/database';
import { armazenamento } from './armazenamento';

/**
 * Every process of the service must see the one store the files' bytes are in: each removes
 * bytes on the database's word (the sweep, a deletion, `remove-app-files`), and a store where they
 * are not counts them as removed. A worker on a host without the service's volume (FILES_DIRETORIO
 * an empty folder there) emptied the removal list while the bytes stayed, unreferenced, for good.
 * So the store carries a mark, the database records it, and a process whose store does not carry
 * the recorded mark does not start. Run in the service's start, under its migration lock.
 */
export async function conferirMarcaDoArmazenamento(): Promise<void> {
  const store = armazenamento();
  const [registrada] = await lerLinhas<{ marca: string }>(banco('files'), 'SELECT marca FROM marca_do_armazenamento WHERE id = 1', []);
  const nele = await store.marca();
  if (registrada && nele === registrada.marca) return;
  if (registrada) {
    throw new Error(
      `the file store ${nele === null ? 'carries no mark' : `carries mark ${nele}`} where the database's files are in store ${registrada.marca}: ` +
        'this process does not see the service\'s store (FILES_DIRETORIO on another volume or host?); see "One store" in docs/files.md',
    );
  }
  // the first start, or the first since marks exist: this store is the database's (with the mark
  // it already carries, when a database was made anew beside it)
  const marca = nele ?? randomUUID();
  if (nele === null) await store.marcar(marca);
  await banco('files').query('INSERT INTO marca_do_armazenamento (id, marca, criada_em) VALUES (1, ?, NOW(3))', { replacements: [marca] });
}
