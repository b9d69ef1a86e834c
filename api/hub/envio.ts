import http from 'node:http';
import https from 'node:https';
import { Config, config } from '../../config';
import { agentesDeSaida } from '../../lib/conexoes-de-saida';
import { DestinoBloqueado, GuardaDeDestino, guardaDeDestino } from '../../lib/destino-seguro';
import { aoEncerrar } from '../../lib/lifecycle';

/**
 * One HTTP POST of a delivery: time-out per attempt, redirects never followed, the first KiB of
 * the answer kept, and the SSRF guard applied to the address actually connected to (checked in
 * the socket's DNS lookup, so a name that changes between check and use cannot slip through).
 */
export interface ResultadoDoEnvio {
  status: number | null;
  erro: string | null;
  resposta: string | null;
  retryAfterMs?: number;
  duracaoMs: number;
  /** cut by the hub's shutdown: no answer of the subscriber's, nothing to hold against it */
  interrompido?: true;
}

// no cap on sockets per subscriber: a worker's attempts in flight are already bounded by
// HUB_ENTREGA_CONCORRENCIA (up to 1,000), and a slow subscription's by its turn (entregas.ts,
// HUB_ENTREGA_POR_ASSINATURA); an attempt queued inside the agent, waiting for a socket, would
// spend its time-out there. Idle ones close after 30 s (a subscriber no longer called keeps none)
const agentes = agentesDeSaida();
/** Set as the connections close on shutdown: an attempt they cut is not sent again (below). */
let encerrando = false;
// on shutdown, once the workers are done: the subscribers' idle connections are closed, not left
// to the process's end, and so are those of attempts still running past the grace period
aoEncerrar('filas', 'conexoes-com-assinantes', async () => {
  encerrando = true;
  agentes['http:'].destroy();
  agentes['https:'].destroy();
});

const LIMITE_DA_RESPOSTA = 1024;
/**
 * Past this much of an answer's body the attempt is decided on its status and the connection
 * dropped: a subscriber streaming an answer without end (or a large page) would otherwise hold the
 * worker's slot, and the hub's bandwidth, until the time-out, on every attempt.
 */
const MAXIMO_LIDO_DA_RESPOSTA = 64 * 1024;

let guardaFeita: { de: Config['hub']; guarda: GuardaDeDestino | null } | undefined;
/** The SSRF guard, with the networks HUB_REDES_PERMITIDAS lets through; none when HUB_PERMITIR_DESTINOS_PRIVADOS. */
function guardaDoHub(): GuardaDeDestino | null {
  const hub = config().hub;
  if (guardaFeita?.de !== hub) guardaFeita = { de: hub, guarda: hub.permitirDestinosPrivados ? null : guardaDeDestino(hub.redesPermitidas) };
  return guardaFeita.guarda;
}

/** RFC 9110's obsolete asctime date (`Sun Nov  6 08:49:37 1994`), GMT without saying so. */
const DATA_ASCTIME = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$/;

/**
 * A Retry-After as RFC 9110 writes it: whole seconds, or an HTTP date, which is always GMT. A date
 * that does not say GMT (other than asctime's) is no HTTP date: Date.parse would read it in the
 * host's time zone, so hosts in different zones would wait hours apart.
 */
function retryAfter(valor: string | undefined): number | undefined {
  const v = valor?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const data = / GMT$/.test(v) ? Date.parse(v) : DATA_ASCTIME.test(v) ? Date.parse(`${v} GMT`) : NaN;
  return Number.isNaN(data) ? undefined : Math.max(0, data - Date.now());
}

export function enviarPost(url: string, corpo: string, cabecalhos: Record<string, string>, tempoLimiteMs: number): Promise<ResultadoDoEnvio> {
  return enviar(url, corpo, cabecalhos, tempoLimiteMs, Date.now(), false);
}

function enviar(
  url: string,
  corpo: string,
  cabecalhos: Record<string, string>,
  tempoLimiteMs: number,
  inicio: number,
  conexaoNova: boolean,
): Promise<ResultadoDoEnvio> {
  const destino = new URL(url);
  const seguro = destino.protocol === 'https:';
  const guarda = guardaDoHub();
  if (guarda?.recusaLiteral(destino)) {
    return Promise.resolve({ status: null, erro: 'destino em endereço privado recusado', resposta: null, duracaoMs: 0 });
  }
  return new Promise((resolve) => {
    let terminou = false;
    let respondeu = false;
    /** the answer's status, once its status line came (a body still arriving may time out) */
    let statusRecebido: number | null = null;
    /** its body's first bytes, kept also when it never ends (timed out, cut): they often say why */
    let partes: Buffer[] | null = null;
    const respostaAteAqui = () => (partes ? Buffer.concat(partes).subarray(0, LIMITE_DA_RESPOSTA).toString('utf8') : null);
    const fim = (r: Omit<ResultadoDoEnvio, 'duracaoMs'>) => {
      if (terminou) return;
      terminou = true;
      clearTimeout(relogio);
      resolve({ ...r, duracaoMs: Date.now() - inicio });
    };
    const req = (seguro ? https : http).request(
      destino,
      {
        method: 'POST',
        // a new connection of its own for the call made again (below), never a kept one
        agent: conexaoNova ? false : seguro ? agentes['https:'] : agentes['http:'],
        lookup: guarda?.lookupPara(destino),
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(corpo), 'user-agent': 'suite-webhook-hub', ...cabecalhos },
      },
      (res) => {
        respondeu = true;
        statusRecebido = res.statusCode ?? null;
        const recebidas: Buffer[] = [];
        partes = recebidas;
        let tamanho = 0;
        const decidir = () => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          fim({
            status,
            resposta: respostaAteAqui() ?? '',
            erro: ok ? null : status >= 300 && status < 400 ? `redirecionamento ${status} não é seguido` : `HTTP ${status}`,
            retryAfterMs: status === 429 || status === 503 ? retryAfter(res.headers['retry-after'] as string | undefined) : undefined,
          });
        };
        res.on('data', (p: Buffer) => {
          if (tamanho < LIMITE_DA_RESPOSTA) recebidas.push(p);
          tamanho += p.length;
          if (tamanho <= MAXIMO_LIDO_DA_RESPOSTA) return;
          decidir();
          res.destroy();
        });
        res.on('end', decidir);
        res.on('error', (err) => fim({ status: res.statusCode ?? null, erro: err.message, resposta: respostaAteAqui() }));
      },
    );
    // counted from the attempt's start: a call made again (below) shares its time-out
    const relogio = setTimeout(() => {
      req.destroy();
      fim({ status: statusRecebido, erro: `tempo limite de ${tempoLimiteMs} ms esgotado`, resposta: respostaAteAqui() });
    }, inicio + tempoLimiteMs - Date.now());
    req.on('error', (err: NodeJS.ErrnoException) => {
      // the hub closed it, shutting down: the subscriber may be handling the call, so it is not made
      // again here (the job's next run makes it, as for any attempt cut by a stop)
      if (encerrando) return fim({ status: null, erro: 'tentativa interrompida pelo encerramento do hub', resposta: null, interrompido: true });
      // a kept-alive connection the subscriber closed while idle fails as it is reused, before any
      // answer: that is not the subscriber's failure, so the call is made once more on a new one
      if (req.reusedSocket && !respondeu && !terminou && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        terminou = true;
        clearTimeout(relogio);
        resolve(enviar(url, corpo, cabecalhos, tempoLimiteMs, inicio, true));
        return;
      }
      fim({ status: null, erro: err instanceof DestinoBloqueado ? err.message : `falha de conexão: ${err.message}`, resposta: null });
    });
    req.end(corpo);
  });
}
