import { bancoForaDoAlcance, emPotenciaDeDois, esperaPorTravaEsgotada, lerLinhas } from './database';

/**
 * Group commit: requests that arrive while a batch is being written wait and are written together
 * in the next one (one transaction, multi-row statements, one commit), so the cost of a commit is
 * shared under load; when idle, a request waits only for the turn of the event loop it came in.
 * A few batches are written at once: one fills while another commits, so CPU and I/O overlap.
 * Reads batch the same way (a delivery worker's reads of the deliveries it runs at once).
 *
 * `particao`, when given, keeps requests of one partition (a conversation, say) in one line of
 * batches: two batches this process writes at once never touch the same rows, so they never
 * deadlock on them (batches of other processes still may: the caller retries those).
 *
 * When a whole batch fails, its requests are written again one by one, so one bad request (a key
 * repeated inside the batch, a row someone else locked) fails alone. `gravarUm` decides what one
 * request alone means (by default, a batch of one). A batch that failed for want of the database
 * (no connection) fails whole: one by one, each would wait out the connection's time-out again;
 * so do the rest of a partition once one of its requests alone waited past the lock limit.
 */
interface Espera<P, R> {
  pedido: P;
  responder: (r: R) => void;
  falhar: (err: unknown) => void;
}

/** A batch's SQL message stays under it (`peso`): MariaDB's default max_allowed_packet is 16 MiB. */
export const MENSAGEM_MAXIMA = 14 * 1024 * 1024;

export interface OpcoesDeLotes<P, R> {
  maximo: number;
  /**
   * Caps a batch by the size of what it writes (`peso` of each request, summed), so one statement
   * stays under the database's packet limit however large the requests; a request heavier than
   * the cap goes alone.
   */
  peso?: { de: (pedido: P) => number; maximo: number };
  gravadores: number;
  particao?: (pedido: P) => string;
  gravarUm?: (pedido: P, erroDoLote: unknown) => Promise<R>;
}

export class GravadorEmLotes<P, R> {
  /**
   * Lines of waiting requests: one, written by up to `gravadores` writers; or, with partitions,
   * `gravadores` lines written by one writer each.
   */
  private readonly filas: { esperando: Espera<P, R>[]; gravadores: number }[];
  private readonly gravadoresPorFila: number;

  constructor(
    private readonly gravar: (lote: P[]) => Promise<R[]>,
    private readonly opcoes: OpcoesDeLotes<P, R>,
  ) {
    this.filas = Array.from({ length: opcoes.particao ? opcoes.gravadores : 1 }, () => ({ esperando: [], gravadores: 0 }));
    this.gravadoresPorFila = opcoes.particao ? 1 : opcoes.gravadores;
  }

  guardar(pedido: P): Promise<R> {
    return new Promise((responder, falhar) => {
      const indice = this.opcoes.particao ? hash(this.opcoes.particao(pedido)) % this.filas.length : 0;
      this.filas[indice].esperando.push({ pedido, responder, falhar });
      if (this.filas[indice].gravadores < this.gravadoresPorFila) void this.gravarFila(indice);
    });
  }

  private async gravarFila(indice: number): Promise<void> {
    const fila = this.filas[indice];
    fila.gravadores++;
    try {
      // a free writer waits one turn of the event loop: requests read from the sockets in this
      // turn join its batch instead of going alone, one commit each (hub ingest: 8-11% more
      // events/s)
      await new Promise((r) => setImmediate(r));
      while (fila.esperando.length) await this.gravarLote(fila.esperando.splice(0, this.tamanhoDoProximoLote(fila.esperando)));
    } finally {
      fila.gravadores--;
    }
  }

  private tamanhoDoProximoLote(esperando: Espera<P, R>[]): number {
    const { maximo, peso } = this.opcoes;
    if (!peso) return maximo;
    let n = 0;
    for (let total = 0; n < Math.min(maximo, esperando.length); n++) {
      total += peso.de(esperando[n].pedido);
      if (total > peso.maximo && n > 0) break;
    }
    return n;
  }

  private async gravarLote(lote: Espera<P, R>[]): Promise<void> {
    try {
      const respostas = await this.gravar(lote.map((l) => l.pedido));
      lote.forEach((l, i) => l.responder(respostas[i]));
    } catch (erroDoLote) {
      // the database out of reach fails them all at once: alone, each would wait for it again
      if ((lote.length === 1 && !this.opcoes.gravarUm) || bancoForaDoAlcance(erroDoLote)) {
        for (const l of lote) l.falhar(erroDoLote);
        return;
      }
      // a partition whose request alone waited for a lock past the server's limit: its others would
      // each wait that long again (50 s by default), holding the line, so they fail with it
      const travadas = new Map<string, unknown>();
      for (const l of lote) {
        const particao = this.opcoes.particao?.(l.pedido);
        if (particao !== undefined && travadas.has(particao)) {
          l.falhar(travadas.get(particao));
          continue;
        }
        try {
          l.responder(this.opcoes.gravarUm ? await this.opcoes.gravarUm(l.pedido, erroDoLote) : (await this.gravar([l.pedido]))[0]);
        } catch (err) {
          // its own wait, not the batch's error handed back by a `gravarUm`
          if (particao !== undefined && err !== erroDoLote && esperaPorTravaEsgotada(err)) travadas.set(particao, err);
          l.falhar(err);
        }
      }
    }
  }
}

/** FNV-1a: a partition's line, the same for the same key. */
function hash(texto: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < texto.length; i++) h = Math.imul(h ^ texto.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Reads of one row by its id that arrive together, read together: one prepared statement for up to
 * 64 of them (`sql` gets the list's `?` marks), the list padded to a power of two so a few texts
 * serve every batch. Under load most of such a read's cost is its round trip (the socket writes,
 * the database's turn), not its row: batched, a read of a collaborator cost the intranet about
 * half the CPU (docs/desempenho.md). Ids are matched in lower case, as the routes write them
 * (`id()`, api/shared/paginacao.ts). No one id can fail a read of many, so a batch that fails
 * fails each of its reads with its error, without reading them again one by one.
 */
export function leituraPorIdEmLotes<L extends { id: string }>(
  sequelize: () => { config: { database: string } },
  sql: (marcas: string) => string,
): (id: string) => Promise<L | undefined> {
  const lotes = new GravadorEmLotes<string, L | undefined>(
    async (ids) => {
      const lista = emPotenciaDeDois(ids);
      const linhas = await lerLinhas<L>(sequelize(), sql(lista.map(() => '?').join(', ')), lista);
      const porId = new Map(linhas.map((l) => [l.id.toLowerCase(), l]));
      return ids.map((id) => porId.get(id.toLowerCase()));
    },
    { maximo: 64, gravadores: 2, gravarUm: (_id, erroDoLote) => Promise.reject(erroDoLote) },
  );
  return (id) => lotes.guardar(id);
}
