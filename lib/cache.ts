/**
 * A small in-process cache whose entries expire: for lookups that may be a little stale
 * (permissions for up to 5 minutes, verified tokens until they expire, a hub's event types for
 * a few seconds). Bounded: when full it starts over rather than tracking recency.
 */
export class CacheComPrazo<K, V> {
  private readonly entradas = new Map<K, { valor: V; expiraEm: number }>();
  /** bumped by every `esquecer`: a load that began before it must not store what it read */
  private geracao = 0;

  constructor(
    private readonly prazoMs: () => number,
    private readonly maximo = 10_000,
  ) {}

  obter(chave: K): V | undefined {
    const e = this.entradas.get(chave);
    if (!e) return undefined;
    if (e.expiraEm <= Date.now()) {
      this.entradas.delete(chave);
      return undefined;
    }
    return e.valor;
  }

  /**
   * `expiraEm` overrides the cache's own term (a token's own expiry). `undefined` is never kept (it
   * is what `obter` answers for a miss): a load answering it is asked again next time.
   */
  guardar(chave: K, valor: V, expiraEm = Date.now() + this.prazoMs()): void {
    if (valor === undefined) return;
    if (this.entradas.size >= this.maximo) this.entradas.clear();
    this.entradas.set(chave, { valor, expiraEm });
  }

  async obterOuCarregar(chave: K, carregar: () => Promise<V>): Promise<V> {
    const e = this.entradas.get(chave);
    if (e && e.expiraEm > Date.now()) return e.valor;
    const geracao = this.geracao;
    const valor = await carregar();
    if (geracao === this.geracao) this.guardar(chave, valor);
    return valor;
  }

  /**
   * For a cache of promises: the load of `chave` is stored as it starts, so every caller asking
   * while it runs shares it (obterOuCarregar stores a value once loaded); one that fails is
   * forgotten, for the next caller to try again.
   */
  compartilhar<T>(this: CacheComPrazo<K, Promise<T>>, chave: K, carregar: () => Promise<T>): Promise<T> {
    let carga = this.obter(chave);
    if (!carga) {
      carga = carregar();
      this.guardar(chave, carga);
      carga.catch(() => this.esquecer(chave));
    }
    return carga;
  }

  esquecer(chave?: K): void {
    this.geracao++;
    if (chave === undefined) this.entradas.clear();
    else this.entradas.delete(chave);
  }
}

/**
 * Loads under way, by key: callers asking for a key while its load runs share it, and once it
 * settles (whatever its end) the next caller starts another. Nothing is kept, unlike
 * CacheComPrazo: for work whose result has a home of its own (Redis, the database) or must be
 * read fresh.
 */
export class CargasEmCurso<K, V> {
  private readonly cargas = new Map<K, Promise<V>>();

  compartilhar(chave: K, carregar: () => Promise<V>): Promise<V> {
    let carga = this.cargas.get(chave);
    if (!carga) {
      const nova: Promise<V> = carregar().finally(() => {
        if (this.cargas.get(chave) === nova) this.cargas.delete(chave);
      });
      this.cargas.set(chave, (carga = nova));
    }
    return carga;
  }

  esquecer(): void {
    this.cargas.clear();
  }
}
