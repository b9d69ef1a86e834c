import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { chamar, Opcoes, Resposta } from './http';

/**
 * A service's real answers checked against its own OpenAPI 3.1 document (JSON Schema 2020-12, so
 * `type: [..., "null"]` and no `nullable`): each status must be documented for the operation, in
 * the media type the document gives, and the body must validate against the documented schema,
 * formats included; a documented header must be sent, with the documented value when there is one. `cobertas` keeps the operations answered with a documented success.
 */
export function conformidadeDe(base: string, doc: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // the document's `#/components/...` references, resolved against the document itself
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const compilados = new Map<string, ValidateFunction>();
  const cobertas = new Set<string>();
  /** the answers that do not conform, all of them kept so one run reports every mismatch */
  const falhas: string[] = [];

  const aoDocumento = (no: unknown): unknown => {
    if (Array.isArray(no)) return no.map(aoDocumento);
    if (!no || typeof no !== 'object') return no;
    return Object.fromEntries(
      Object.entries(no).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `doc${v}` : aoDocumento(v)]),
    );
  };

  function operacao(op: string): any {
    const [metodo, caminho] = op.split(' ');
    const o = doc.paths[caminho]?.[metodo.toLowerCase()];
    if (!o) throw new Error(`${op} is not in the document`);
    return o;
  }

  function validador(chave: string, schema: unknown): ValidateFunction {
    let validar = compilados.get(chave);
    if (!validar) {
      validar = ajv.compile(aoDocumento(schema) as object);
      compilados.set(chave, validar);
    }
    return validar;
  }

  /**
   * A JSON body the service took must be one the document's request schema allows; one it refused
   * as malformed (400) one the schema refuses too, unless the refusal depends on what no schema
   * says (`alemDoDocumento`: an event's data against its version's own schema).
   */
  function errosDoCorpo(op: string, corpo: unknown, res: Resposta, alemDoDocumento = false): string[] {
    const schema = operacao(op).requestBody?.content?.['application/json']?.schema;
    if (corpo === undefined) return [];
    if (!schema) return [`${op} took a JSON body the document does not describe`];
    const validar = validador(`${op} corpo`, schema);
    const valido = validar(corpo);
    if (res.status < 300 && !valido) {
      return (validar.errors ?? []).map((e) => `${op} took a body its document refuses: ${e.instancePath || '(raiz)'} ${e.message}`);
    }
    if (res.status === 400 && valido && !alemDoDocumento) return [`${op} refused with 400 a body its document allows: ${JSON.stringify(corpo).slice(0, 200)}`];
    return [];
  }

  /** The documented headers of an answer missing from `res`, or with another value than the one documented. */
  function errosDosCabecalhos(op: string, res: Resposta, documentada: any): string[] {
    return Object.entries<any>(documentada.headers ?? {}).flatMap(([nome, cabecalho]) => {
      const recebido = res.headers.get(nome);
      if (recebido === null) return cabecalho.required ? [`${op} ${res.status} lacks its documented ${nome} header`] : [];
      const esperado = cabecalho.schema?.const;
      return esperado !== undefined && recebido !== esperado ? [`${op} ${res.status} sent ${nome}: ${recebido}, documented ${esperado}`] : [];
    });
  }

  /** What is wrong with `res` as an answer of `op` by the document; empty when it conforms. */
  function erros(op: string, res: Resposta): string[] {
    const documentada = operacao(op).responses[String(res.status)];
    if (!documentada) return [`${op} answered ${res.status}, not documented (${Object.keys(operacao(op).responses).join(', ')}): ${res.text.slice(0, 300)}`];
    return [...errosDosCabecalhos(op, res, documentada), ...errosDoConteudo(op, res, documentada)];
  }

  function errosDoConteudo(op: string, res: Resposta, documentada: any): string[] {
    const tipo = (res.headers.get('content-type') ?? '').split(';')[0].trim();
    if (!documentada.content) return res.text ? [`${op} ${res.status} documents no body, but sent ${tipo}: ${res.text.slice(0, 200)}`] : [];
    const midias = Object.keys(documentada.content);
    const midia = midias.find((m) => m === tipo) ?? midias.find((m) => m === '*/*' || (m.endsWith('/*') && tipo.startsWith(m.slice(0, -1))));
    if (!midia) return [`${op} ${res.status} sent ${tipo || 'no body'}, documented ${midias.join(', ')}`];
    if (!/json/.test(midia)) return [];
    const validar = validador(`${op} ${res.status} ${midia}`, documentada.content[midia].schema);
    if (validar(res.body)) return [];
    return (validar.errors ?? []).map((e) => `${op} ${res.status}: ${e.instancePath || '(raiz)'} ${e.message} ${JSON.stringify(e.params)}`);
  }

  /**
   * Calls `op` ("GET /usuario/{id}") with its path parameters, checks the answer against the
   * document and, when given, its status; answers the response.
   */
  async function chamarOp(
    op: string,
    params: Record<string, string> = {},
    o: Opcoes & { status?: number; alemDoDocumento?: boolean } = {},
  ): Promise<Resposta> {
    const [metodo, caminho] = op.split(' ');
    const url = caminho.replace(/\{(\w+)\}/g, (_, nome: string) => {
      if (params[nome] === undefined) throw new Error(`${op}: no value for {${nome}}`);
      return encodeURIComponent(params[nome]);
    });
    const res = await chamar(base, metodo, url, o);
    // a request refused before its body is read (no token) says nothing of the body
    const problemas = [...erros(op, res), ...(res.status === 401 ? [] : errosDoCorpo(op, o.body, res, o.alemDoDocumento))];
    falhas.push(...problemas);
    // a status other than the one the scenario needs stops it (what follows would make no sense)
    if (o.status !== undefined && res.status !== o.status) {
      throw new Error([`${op}: expected ${o.status}, got ${res.status}: ${res.text.slice(0, 300)}`, ...falhas].join('\n'));
    }
    if (res.status < 300 && !problemas.length) cobertas.add(op);
    return res;
  }

  /** Every operation of the document, "METHOD /path". */
  const operacoes = (): string[] =>
    Object.entries<any>(doc.paths).flatMap(([caminho, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${caminho}`));

  return { doc, chamarOp, erros, operacao, operacoes, cobertas, falhas };
}

export type Conformidade = ReturnType<typeof conformidadeDe>;
