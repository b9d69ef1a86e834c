/** RFC 9457 problem details, as every answer of the suite that is an error carries them (DESIGN §4). */

const TITULOS: Record<number, string> = {
  400: 'Requisição inválida',
  401: 'Não autenticado',
  403: 'Proibido',
  404: 'Não encontrado',
  405: 'Método não permitido',
  408: 'Requisição demorada demais',
  409: 'Conflito',
  413: 'Corpo grande demais',
  415: 'Tipo de conteúdo não suportado',
  422: 'Referência inválida',
  423: 'Bloqueado',
  429: 'Muitas requisições',
  431: 'Cabeçalhos grandes demais',
  500: 'Erro interno',
  503: 'Serviço indisponível',
};

export const tituloDoStatus = (status: number): string => TITULOS[status] ?? (status < 500 ? 'Requisição inválida' : 'Erro');

export interface Problema {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { campo: string; mensagem: string }[];
  request_id?: string;
}

export function problema(status: number, code: string, detail: string, extra: Partial<Problema> = {}): Problema {
  return { type: `urn:problema:${code}`, title: tituloDoStatus(status), status, detail, code, ...extra };
}
