import { randomUUID } from 'node:crypto';
import { config } from '../../config';
import { banco, lerLinhas } from '../../lib/database';
import { logger } from '../../lib/logger';
import { Armazenamento, armazenamento } from './armazenamento';

const log = logger('files');

/**
 * Every process of the service must see the one store the files' bytes are in: each removes
 * bytes on the database's word (the sweep, a deletion, `remove-app-files`), and a store where they
 * are not counts them as removed. A worker on a host without the service's volume (FILES_DIRETORIO
 * an empty folder there) emptied the removal list while the bytes stayed, unreferenced, for good.
 * So the store carries a mark, the database records it, and a process whose store does not carry
 * the recorded mark does not start; a running one re-reads it before removing bytes and before
 * storing any (a volume unmounted under it leaves an empty folder: an upload there was a row whose
 * bytes the volume, mounted again, hid), and its readiness says so. In LOCALHOST, where `data/` may be wiped while the
 * database stays, the folder found is taken as the store instead, with a warning.
 */

/** The mark this process's start found its store to carry; undefined before the check. */
let marcaDaPartida: string | undefined;
/** Until when the store's mark, last read right, is taken as still right without reading it again. */
let conferidaAte = 0;
const RELEITURA_MS = 5_000;

/** What a store carries, as the errors say it. */
const oQueTraz = (marca: string | null) => (marca === null ? 'no mark' : `mark ${marca}`);

/**
 * Whether the store holds the bytes of one of the database's newest files, when it has any: a
 * committed row always had its bytes stored first (arquivos.ts), so a store holding none of them
 * is not the database's.
 */
async function guardaArquivosDoBanco(store: Armazenamento): Promise<boolean> {
  const recentes = await lerLinhas<{ id: string }>(banco('files'), 'SELECT id FROM arquivo WHERE deletado_em IS NULL ORDER BY criado_em DESC LIMIT 10', []);
  for (const { id } of recentes) {
    const bytes = await store.ler(id);
    if (bytes) {
      bytes.destroy();
      return true;
    }
  }
  return recentes.length === 0;
}

/** Run in the service's start, under its migration lock: see above. */
export async function conferirMarcaDoArmazenamento(): Promise<void> {
  const store = armazenamento();
  const [registrada] = await lerLinhas<{ marca: string }>(banco('files'), 'SELECT marca FROM marca_do_armazenamento WHERE id = 1', []);
  let nele = await store.marca();
  if (!registrada || registrada.marca !== nele) {
    let motivo: string | undefined;
    if (registrada) motivo = `the file store carries ${oQueTraz(nele)} where the database's files are in store ${registrada.marca}`;
    // the first start since marks exist: a store with no mark must hold the files already listed
    else if (nele === null && !(await guardaArquivosDoBanco(store))) motivo = "the file store carries no mark and holds none of the database's newest files";
    if (motivo && config().ambiente !== 'LOCALHOST') {
      throw new Error(`${motivo}: this process does not see the service's store (FILES_DIRETORIO on another volume or host?); see "One store" in docs/files.md`);
    }
    if (motivo) log.warn({ motivo }, 'LOCALHOST: a pasta encontrada passa a ser o armazenamento dos arquivos');
    // the mark it carries, when a database was made anew beside it (or, in LOCALHOST, another's)
    if (nele === null) {
      nele = randomUUID();
      await store.marcar(nele);
    }
    await banco('files').query('INSERT INTO marca_do_armazenamento (id, marca, criada_em) VALUES (1, ?, NOW(3)) ON DUPLICATE KEY UPDATE marca = VALUES(marca)', {
      replacements: [nele],
    });
  }
  marcaDaPartida = nele;
  conferidaAte = Date.now() + RELEITURA_MS;
}

/** Before bytes are removed or stored: the store still carries the mark the start found (read again every few seconds). */
export async function armazenamentoAindaConferido(): Promise<void> {
  if (marcaDaPartida === undefined || Date.now() < conferidaAte) return;
  const nele = await armazenamento().marca();
  if (nele !== marcaDaPartida) {
    throw new Error(`the file store now carries ${oQueTraz(nele)} where it carried ${marcaDaPartida} at start (its volume unmounted?): no bytes are stored in it or removed from it`);
  }
  conferidaAte = Date.now() + RELEITURA_MS;
}
