import { randomUUID } from 'node:crypto';
import { createWriteStream, WriteStream } from 'node:fs';
import { access, constants, lstat, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { aoEncerrar } from '../../lib/lifecycle';
import { logger } from '../../lib/logger';
import type { Armazenamento } from './armazenamento';

/** fsync of a folder: names created or renamed in it survive a power cut (Linux, macOS). */
async function sincronizarPasta(pasta: string): Promise<void> {
  const h = await open(pasta, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** A key is an id: letters, digits, `-` and `_` only, so it can never name a path outside the folder. */
const CHAVE = /^[A-Za-z0-9_-]{1,128}$/;
/**
 * A partial file untouched for this long belongs to an upload that will never finish (a crash): at
 * least an hour, and longer than an upload may take (FILES_PRAZO_DO_ENVIO_S), so a slow one that
 * paused is never swept while it can still arrive.
 */
export const abandonoDeParcialMs = (prazoDoEnvioMs: number) => Math.max(60 * 60_000, prazoDoEnvioMs + 5 * 60_000);

/**
 * Files on the local disk: `<dir>/<last two characters of the id>/<id>` (256 sub-folders: the
 * random end of a v7 id spreads them evenly). An upload is written to `<dir>/parciais/` and renamed
 * into place only once complete and flushed, so a reader never sees half a file and a failed upload
 * leaves nothing behind.
 */
export class ArmazenamentoLocal implements Armazenamento {
  private readonly parciais: string;

  constructor(
    readonly diretorio: string,
    private readonly abandonoMs = abandonoDeParcialMs(0),
  ) {
    this.parciais = path.join(diretorio, 'parciais');
  }

  /** beside the 256 sub-folders and `parciais`, which no key can name */
  private get arquivoDaMarca(): string {
    return path.join(this.diretorio, 'marca-do-armazenamento');
  }

  private caminho(chave: string): string {
    if (!CHAVE.test(chave)) throw new Error(`invalid storage key: ${JSON.stringify(chave)}`);
    return path.join(this.diretorio, chave.slice(-2), chave);
  }

  async gravar(chave: string, origem: Readable): Promise<void> {
    const final = this.caminho(chave);
    // the source may fail while the folder is being made: its error waits for the pipeline below
    const guardarErro = () => undefined;
    origem.on('error', guardarErro);
    const parcial = path.join(this.parciais, `${chave}.${randomUUID()}`);
    let destino: WriteStream | undefined;
    try {
      await mkdir(this.parciais, { recursive: true, mode: 0o700 });
      // flush: fsync before close, so the renamed file is whole after a power cut
      destino = createWriteStream(parcial, { flags: 'wx', mode: 0o600, flush: true });
      await pipeline(origem, destino);
      const pasta = path.dirname(final);
      await mkdir(pasta, { recursive: true, mode: 0o700 });
      await rename(parcial, final);
      // the rename itself durable too: the row written next must not outlive the file's name; nor
      // the sub-folder's own name, kept by the storage folder: synced on every write, since another
      // upload may have made the sub-folder a moment ago and not synced it yet (an unchanged
      // folder's sync costs next to nothing)
      await sincronizarPasta(pasta);
      await sincronizarPasta(this.diretorio);
    } catch (err) {
      // a source failing at once rejects the pipeline before the file is even open: removed
      // before the open, the file would be created after (an empty partial left behind)
      if (destino && !destino.closed) await new Promise<void>((r) => destino!.once('close', () => r()));
      await rm(parcial, { force: true });
      throw err;
    } finally {
      origem.off('error', guardarErro);
    }
  }

  async ler(chave: string): Promise<Readable | null> {
    try {
      const arquivo = await open(this.caminho(chave), 'r');
      return arquivo.createReadStream();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async remover(chave: string): Promise<void> {
    await rm(this.caminho(chave), { force: true });
  }

  /**
   * Creates the folders and sweeps partial files abandoned by a crash, now and then again every
   * quarter of the abandonment time: a process restarted soon after a crash (an orchestrator's
   * restart of a killed one) would otherwise keep the crash's partial files until a later restart.
   */
  async preparar(): Promise<void> {
    await mkdir(this.parciais, { recursive: true, mode: 0o700 });
    await this.limparParciais();
    const varredura = setInterval(() => {
      this.limparParciais().catch((err) => logger('files').warn({ err }, 'varredura de envios abandonados falhou'));
    }, this.abandonoMs / 4);
    varredura.unref();
    aoEncerrar('workers', `files:parciais:${this.diretorio}`, async () => clearInterval(varredura));
  }

  async pronto(): Promise<void> {
    await access(this.parciais, constants.W_OK);
  }

  async marca(): Promise<string | null> {
    try {
      return (await readFile(this.arquivoDaMarca, 'utf8')).trim() || null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async marcar(marca: string): Promise<void> {
    await mkdir(this.diretorio, { recursive: true, mode: 0o700 });
    // what an earlier write left, stopped before its rename
    for (const nome of await readdir(this.diretorio)) {
      if (nome.startsWith(`${path.basename(this.arquivoDaMarca)}.`)) await rm(path.join(this.diretorio, nome), { force: true });
    }
    const provisorio = `${this.arquivoDaMarca}.${randomUUID()}`;
    await writeFile(provisorio, `${marca}\n`, { mode: 0o600, flush: true });
    await rename(provisorio, this.arquivoDaMarca);
    await sincronizarPasta(this.diretorio);
  }

  /**
   * Only files: an upload writes nothing else here, so a folder or link is someone else's (an
   * operator's copy), left alone and named in a warning rather than stopping the start.
   */
  async limparParciais(agora = Date.now()): Promise<number> {
    let removidos = 0;
    const alheios: string[] = [];
    for (const nome of await readdir(this.parciais).catch(() => [] as string[])) {
      const caminho = path.join(this.parciais, nome);
      const info = await lstat(caminho).catch(() => undefined);
      if (!info || agora - info.mtimeMs <= this.abandonoMs) continue;
      if (!info.isFile()) {
        alheios.push(nome);
        continue;
      }
      await rm(caminho, { force: true });
      removidos++;
    }
    if (removidos) logger('files').warn({ removidos }, 'envios abandonados removidos do disco');
    if (alheios.length) logger('files').warn({ alheios: alheios.slice(0, 20) }, 'parciais/ guarda o que não é um envio: deixado como está');
    return removidos;
  }
}
