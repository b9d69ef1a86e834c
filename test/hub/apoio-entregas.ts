import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { dormir, esperarAte } from '../helpers/espera';
import { cliente, Resposta as RespostaHttp } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarWorkers } from '../../lib/runner';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * What the hub's publishing and delivery tests share: a subscriber that is a real HTTP server the
 * test controls, and the hub as its clients use it (identity applications synced by a master's
 * listing, an event type with a version, a subscription, publications, the monitoring routes).
 */

export { dormir, esperarAte };

/** A unique lowercase mark for names (event type names accept letters, digits, _ and -). */
export const marca = (prefixo = 'm') => `${prefixo}${randomBytes(5).toString('hex')}`;

// ---------------------------------------------------------------------------------------------
// The subscriber
// ---------------------------------------------------------------------------------------------

/** One request the subscriber received, raw body kept byte for byte (signatures are over it). */
export interface Recebida {
  /** the HTTP method (DESIGN §5: a delivery is a POST) */
  metodo: string;
  caminho: string;
  cabecalhos: http.IncomingHttpHeaders;
  bruto: Buffer;
  corpo: any;
  webhookId: string;
  /** when it arrived (ms since the epoch) */
  em: number;
}

/** A status, or a status with a delay before answering, a body and headers. */
export type RespostaDoReceptor = number | { status?: number; atrasoMs?: number; corpo?: string; cabecalhos?: Record<string, string> };

/** Decides the answer; `vez` counts the calls with this webhook-id (1 on the first attempt). */
export type Responder = (r: Recebida, vez: number) => RespostaDoReceptor | Promise<RespostaDoReceptor>;

/**
 * A subscriber on 127.0.0.1 (and ::1 when there is one) at a free port, addressed as localhost, as
 * SPEC 4.3 rule 7 allows. `responder` can be swapped between calls.
 */
export async function iniciarReceptor(responder: Responder = () => 200) {
  const recebidas: Recebida[] = [];
  const estado = { responder };
  const handler: http.RequestListener = (req, res) => {
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', async () => {
      const bruto = Buffer.concat(partes);
      let corpo: any;
      try {
        corpo = JSON.parse(bruto.toString('utf8'));
      } catch {
        corpo = undefined;
      }
      const webhookId = String(req.headers['webhook-id'] ?? '');
      const r: Recebida = { metodo: req.method!, caminho: req.url!, cabecalhos: req.headers, bruto, corpo, webhookId, em: Date.now() };
      recebidas.push(r);
      const vez = recebidas.filter((x) => x.webhookId === webhookId).length;
      let saida: RespostaDoReceptor;
      try {
        saida = await estado.responder(r, vez);
      } catch {
        saida = 500;
      }
      const { status = 200, atrasoMs = 0, corpo: texto = '{}', cabecalhos = {} } = typeof saida === 'number' ? { status: saida } : saida;
      if (atrasoMs) await dormir(atrasoMs);
      // the hub may have given up (time-out) or died meanwhile: nothing to answer then
      if (res.destroyed || res.headersSent) return;
      res.writeHead(status, { 'content-type': 'application/json', ...cabecalhos });
      res.end(texto);
    });
  };
  const servidores: http.Server[] = [];
  const escutar = (host: string, porta: number) =>
    new Promise<http.Server>((resolve, reject) => {
      const s = http.createServer(handler);
      s.once('error', reject);
      s.listen(porta, host, () => {
        servidores.push(s);
        resolve(s);
      });
    });
  const porta = ((await escutar('127.0.0.1', 0)).address() as AddressInfo).port;
  try {
    await escutar('::1', porta);
  } catch {
    // no IPv6 loopback here: localhost resolves to 127.0.0.1 only
  }
  return {
    porta,
    url: (caminho = '/') => `http://localhost:${porta}${caminho}`,
    recebidas,
    set responder(f: Responder) {
      estado.responder = f;
    },
    /** calls received with this webhook-id */
    de: (webhookId: string) => recebidas.filter((r) => r.webhookId === webhookId),
    async fechar() {
      for (const s of servidores) s.closeAllConnections();
      await Promise.all(servidores.map((s) => new Promise((r) => s.close(r))));
    },
  };
}

export type Receptor = Awaited<ReturnType<typeof iniciarReceptor>>;

// ---------------------------------------------------------------------------------------------
// The hub as its clients use it
// ---------------------------------------------------------------------------------------------

/** `dados` of the test events: `n` required and an integer, `texto` optional. */
export const ESQUEMA = {
  type: 'object',
  required: ['n'],
  properties: { n: { type: 'integer' }, texto: { type: 'string' } },
  additionalProperties: false,
};

export interface AplicativoDeTeste {
  /** identity id (the `sub` of its token, the audience of its deliveries) */
  id: string;
  nome: string;
  token: string;
  /** its copy at the hub (SPEC §2 Aplicativo) */
  hub: any;
}

export interface OpcoesDaAssinatura {
  url_de_destino: string;
  versao_do_esquema?: number;
  maximo_de_tentativas?: number;
  tempo_limite_em_segundos?: number;
  ativa?: boolean;
}

export function hubDe(suite: SuiteDeTeste) {
  const identity = identityDe(suite.url.identity);
  const api = cliente(suite.url.hub);
  const admin = () => identity.admin();

  const exigir = (res: RespostaHttp, status: number, oQue: string) => {
    if (res.status !== status) throw new Error(`${oQue}: ${res.status} ${res.text}`);
    return res.body;
  };

  /** SPEC 4.4 rule 3: a master's GET /aplicativo syncs identity's applications first. */
  async function noHub(...apps: { id: string; nome: string }[]): Promise<any[]> {
    return esperarAte(
      async () => {
        const res = await api.get('/aplicativo', { token: await admin(), query: { tamanho: 1000 } });
        if (res.status !== 200) return null;
        const achados = apps.map((app) => (res.body.itens as any[]).find((a) => a.identificador_no_auth === app.id));
        return achados.every(Boolean) && achados;
      },
      `identity applications ${apps.map((a) => a.nome).join(', ')} at the hub`,
      15_000,
    );
  }

  /** Identity applications (with their tokens) and their copies at the hub. */
  async function aplicativos(...nomes: string[]): Promise<AplicativoDeTeste[]> {
    const criados = await Promise.all(nomes.map((nome) => identity.criarAplicativo(nome)));
    const copias = await noHub(...criados);
    return criados.map((a, i) => ({ id: a.id, nome: a.nome, token: a.token, hub: copias[i] }));
  }

  async function aplicativo(nome = `App ${marca()}`): Promise<AplicativoDeTeste> {
    return (await aplicativos(nome))[0];
  }

  /** An event type owned by `dono` with version 1 of `esquema`. */
  async function tipo(dono: AplicativoDeTeste, esquema: object = ESQUEMA) {
    const t = exigir(
      await api.post('/tipo_de_evento', { token: await admin(), body: { nome: `teste.${marca()}.evento`, aplicativo_id: dono.hub.id } }),
      201,
      'create event type',
    );
    await versao(t.id, esquema);
    return t as { id: string; nome: string };
  }

  async function versao(tipoId: string, esquema: object = ESQUEMA) {
    return exigir(await api.post(`/tipo_de_evento/${tipoId}/versao`, { token: await admin(), body: { esquema } }), 201, 'create version');
  }

  async function assinar(assinante: AplicativoDeTeste, tipoId: string, o: OpcoesDaAssinatura) {
    const body = { aplicativo_assinante_id: assinante.hub.id, tipo_de_evento_id: tipoId, versao_do_esquema: 1, ...o };
    return exigir(await api.post('/assinatura', { token: await admin(), body }), 201, 'create subscription');
  }

  /** POST /eventos with the publisher's application token. */
  function publicar(publicador: AplicativoDeTeste, body: { tipo: string; versao?: number; dados: unknown; id?: string | null }) {
    return api.post('/eventos', { token: publicador.token, body: { versao: 1, ...body } });
  }

  /**
   * Publisher, subscriber, a type of the publisher with version 1 and the subscriber's
   * subscription to it at `url_de_destino`: the usual start of a delivery test.
   */
  async function cenario(o: OpcoesDaAssinatura & { esquema?: object }) {
    const { esquema, ...opcoes } = o;
    const [publicador, assinante] = await aplicativos(`Publicador ${marca()}`, `Assinante ${marca()}`);
    const t = await tipo(publicador, esquema);
    const assinatura = await assinar(assinante, t.id, opcoes);
    return {
      publicador,
      assinante,
      tipo: t,
      assinatura,
      /** publishes and expects 202; returns {id, entregas} */
      async publicar(dados: unknown = { n: 1 }, extra: { id?: string; versao?: number } = {}) {
        return exigir(await publicar(publicador, { tipo: t.nome, dados, ...extra }), 202, 'publish');
      },
    };
  }

  /** GET /entrega (DESIGN §5 monitoring page). */
  async function entregas(query: Record<string, string | number | undefined> = {}) {
    return exigir(await api.get('/entrega', { token: await admin(), query: { tamanho: 500, ...query } }), 200, 'list deliveries');
  }

  /** GET /entrega/{id}: the delivery with its event and attempts. */
  async function entrega(id: string) {
    return exigir(await api.get(`/entrega/${id}`, { token: await admin() }), 200, `delivery ${id}`);
  }

  /** The only delivery of an event to a subscription. */
  async function entregaDoEvento(assinaturaId: string, eventoId: string) {
    const pagina = await entregas({ assinatura_id: assinaturaId });
    const achadas = (pagina.itens as any[]).filter((e) => e.evento_id === eventoId);
    if (achadas.length !== 1) throw new Error(`expected one delivery of event ${eventoId}, found ${achadas.length}`);
    return achadas[0];
  }

  async function esperarSituacao(id: string, situacao: string, prazoMs = 10_000) {
    return esperarAte(
      async () => {
        const e = await entrega(id);
        return e.situacao === situacao && e;
      },
      `delivery ${id} ${situacao}`,
      prazoMs,
    );
  }

  /** Waits until the first attempt of the delivery is recorded and the delivery waits for the next (tentativas 1). */
  async function esperarPrimeiraFalha(id: string) {
    return esperarAte(async () => {
      const e = await entrega(id);
      return e.situacao === 'pendente' && e.tentativas === 1 && e.historico.length === 1 && e;
    }, `first failed attempt of ${id}`);
  }

  async function assinatura(id: string) {
    return exigir(await api.get(`/assinatura/${id}`, { token: await admin() }), 200, `subscription ${id}`);
  }

  /** A scenario whose `quantas` deliveries end in the error queue (one attempt each): `url_de_destino` must fail. */
  async function cenarioNaFilaDeErro(url_de_destino: string, quantas: number) {
    const c = await cenario({ url_de_destino, maximo_de_tentativas: 1 });
    const naFila = [];
    for (let i = 0; i < quantas; i++) {
      const { id } = await c.publicar({ n: i });
      naFila.push(await esperarSituacao((await entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro'));
    }
    return { c, entregas: naFila };
  }

  return {
    ...{ identity, api, admin, noHub, aplicativo, aplicativos, tipo, versao, assinar, publicar, cenario, cenarioNaFilaDeErro },
    ...{ entregas, entrega, entregaDoEvento, esperarSituacao, esperarPrimeiraFalha, assinatura },
  };
}

export type Hub = ReturnType<typeof hubDe>;

/**
 * For a whole test file: identity and hub, and a subscriber answering with `responder`. With
 * `entregas` (the default) every worker runs, retries a few milliseconds apart; without, no worker
 * but the application sync, so each queue's content can be read between steps. Registers the
 * file's beforeAll (start) and afterAll (the subscriber stops, then the suite); the answer is
 * filled in once beforeAll has run.
 */
export function hubNesteArquivo(
  opcoes: { entregas?: boolean; env?: Record<string, string>; responder?: Responder } = {},
): { suite: SuiteDeTeste; hub: Hub; receptor: Receptor } {
  const { entregas = true, env, responder } = opcoes;
  const t = {} as { suite: SuiteDeTeste; hub: Hub; receptor: Receptor };
  beforeAll(async () => {
    t.suite = await iniciarSuite(['identity', 'hub'], { workers: entregas, env: { HUB_RETRY_SCHEDULE_MS: '50,100,150', ...env } });
    if (!entregas) await iniciarWorkers(['hub-aplicativo-sync']);
    t.receptor = await iniciarReceptor(responder);
    t.hub = hubDe(t.suite);
  });
  afterAll(async () => {
    await t.receptor?.fechar();
    await t.suite?.encerrar();
  });
  return t;
}
