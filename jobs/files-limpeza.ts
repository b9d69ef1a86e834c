import { varrerBytesAApagar } from '../api/files/arquivos';

/** Adapter: removes the bytes whose removal a deletion left owed. */
export async function processarFilesLimpeza() {
  return { removidos: await varrerBytesAApagar() };
}
