import { varrerBytesAApagar } from '../api/files/arquivos';

/** Adapter: removes the owed bytes that are due (a deletion's, an upload's that never got its row). */
export async function processarFilesLimpeza() {
  return { removidos: await varrerBytesAApagar() };
}
