import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { config } from '../config';
import { NomeDoServico, SERVICOS } from '../config/services';

/**
 * LOCALHOST only: the credentials `npm start` generated for the suite's own applications, kept in
 * the data folder (mode 0600) so a service started on its own (`suite api hub`) finds them too.
 * Elsewhere they come from `<SERVICE>_CLIENT_ID` / `<SERVICE>_CLIENT_SECRET`.
 */
export type Credenciais = Partial<Record<NomeDoServico, { clientId: string; clientSecret: string }>>;

const arquivo = () => path.resolve(config().dataDir, `${config().dbPrefix}-credenciais.json`);

/**
 * No file yet is no credentials; a file that cannot be read or parsed is an error, not "none":
 * identity's start would take it for a first start and renew every suite application's secret.
 */
export async function lerCredenciaisLocais(): Promise<Credenciais> {
  let texto: string;
  try {
    texto = await readFile(arquivo(), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read the suite's credentials file ${arquivo()} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(texto) as Credenciais;
  } catch {
    throw new Error(`the suite's credentials file ${arquivo()} is not JSON: remove it and start identity again`);
  }
}

/** A copy being written: the file's name and a random suffix. */
const PROVISORIO = /^\.[0-9a-f]{12}$/;

/**
 * Written whole under another name, then renamed over the file: every service reads it on each
 * token request, and one reading while it was rewritten in place found it empty. Copies a process
 * killed mid-write left behind (secrets, however private) go first; identity writes the file under
 * its start's lock, so no other write is under way.
 */
export async function gravarCredenciaisLocais(c: Credenciais): Promise<void> {
  const pasta = path.dirname(arquivo());
  const nome = path.basename(arquivo());
  await mkdir(pasta, { recursive: true });
  for (const outro of await readdir(pasta)) {
    // best effort: one that cannot be removed must not stop identity's start
    if (outro.startsWith(nome) && PROVISORIO.test(outro.slice(nome.length))) await rm(path.join(pasta, outro), { force: true }).catch(() => undefined);
  }
  const provisorio = `${arquivo()}.${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(provisorio, JSON.stringify(c, null, 2), { mode: 0o600 });
    await rename(provisorio, arquivo());
  } finally {
    // gone once renamed; a failure to remove it must not hide the write's own
    await rm(provisorio, { force: true }).catch(() => undefined);
  }
}

/**
 * A service's own client credentials: env first, then (LOCALHOST) the local file; `configuracao`
 * names where they were read, for the operator when identity refuses them.
 */
export async function credenciaisDe(
  servico: NomeDoServico,
): Promise<{ clientId: string; clientSecret: string; configuracao: string } | undefined> {
  const s = config().servicos[servico];
  const env = SERVICOS[servico].env;
  if (s.clientId && s.clientSecret) return { clientId: s.clientId, clientSecret: s.clientSecret, configuracao: `${env}_CLIENT_ID/${env}_CLIENT_SECRET` };
  if (config().ambiente !== 'LOCALHOST') return undefined;
  const c = (await lerCredenciaisLocais())[servico];
  return c && { ...c, configuracao: `${arquivo()} (written by identity's start)` };
}

/**
 * A suite application's id at identity, for a service that only needs to recognise it (the hub
 * finding identity's application): `<SERVICE>_CLIENT_ID` alone is enough, no secret.
 */
export async function idDoAplicativoDe(servico: NomeDoServico): Promise<string | undefined> {
  return config().servicos[servico].clientId ?? (await credenciaisDe(servico))?.clientId;
}
