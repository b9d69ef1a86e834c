/**
 * Typed domain errors: they carry a stable code and know nothing of HTTP. The error middleware
 * (api/shared/http-errors.ts) maps each kind to a status (DESIGN §4).
 */
export type TipoDeErro =
  | 'dados_invalidos'
  | 'nao_autenticado'
  | 'proibido'
  | 'nao_encontrado'
  | 'conflito'
  | 'referencia_invalida'
  | 'idempotency_key_reusada'
  | 'bloqueado'
  | 'limite_excedido'
  | 'indisponivel'
  | 'em_andamento'
  | 'corpo_grande_demais'
  | 'codificacao_nao_suportada';

export interface ErroDeCampo {
  campo: string;
  mensagem: string;
}

export class ErroDeDominio extends Error {
  /** Retry-After of the answer; null: none, not even a 503's default (a request that must not be repeated) */
  readonly retryAfterSegundos?: number | null;

  constructor(
    readonly tipo: TipoDeErro,
    message: string,
    readonly erros?: ErroDeCampo[],
    /** `causa` is for logs and operators' commands: problem+json answers never show it */
    opcoes: { retryAfterSegundos?: number | null; causa?: unknown } = {},
  ) {
    super(message, opcoes.causa === undefined ? undefined : { cause: opcoes.causa });
    this.name = 'ErroDeDominio';
    this.retryAfterSegundos = opcoes.retryAfterSegundos;
  }
}

export const dadosInvalidos = (mensagem: string, erros?: ErroDeCampo[]) =>
  new ErroDeDominio('dados_invalidos', mensagem, erros);
export const naoAutenticado = (mensagem = 'Token ausente, inválido ou expirado.') =>
  new ErroDeDominio('nao_autenticado', mensagem);
export const proibido = (mensagem = 'Sem permissão para esta operação.') => new ErroDeDominio('proibido', mensagem);
export const naoEncontrado = (oQue: string) => new ErroDeDominio('nao_encontrado', `${oQue} não encontrado.`);
/** `campo`: the field whose value another record holds, when the conflict is one field's */
export const conflito = (mensagem: string, campo?: string) =>
  new ErroDeDominio('conflito', mensagem, campo === undefined ? undefined : [{ campo, mensagem }]);
/** The same request is still being handled (503 with Retry-After): not a failure of the service, not logged as one. */
export const emAndamento = (mensagem: string, retryAfterSegundos: number) =>
  new ErroDeDominio('em_andamento', mensagem, undefined, { retryAfterSegundos });
export const referenciaInvalida = (campo: string, mensagem: string) =>
  new ErroDeDominio('referencia_invalida', mensagem, [{ campo, mensagem }]);
/** An Idempotency-Key sent again with another request (422, as the IETF draft on the header says). */
export const idempotencyKeyReusada = (mensagem: string) =>
  new ErroDeDominio('idempotency_key_reusada', mensagem, [{ campo: 'Idempotency-Key', mensagem }]);
