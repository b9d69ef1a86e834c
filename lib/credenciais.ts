import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
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

export async function lerCredenciaisLocais(): Promise<Credenciais> {
  try {
    return JSON.parse(await readFile(arquivo(), 'utf8')) as Credenciais;
  } catch {
    return {};
  }
}

export async function gravarCredenciaisLocais(c: Credenciais): Promise<void> {
  await mkdir(path.dirname(arquivo()), { recursive: true });
  await writeFile(arquivo(), JSON.stringify(c, null, 2), { mode: 0o600 });
  await chmod(arquivo(), 0o600);
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
