import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { chamar, Opcoes, Resposta } from './http';

/** How a scenario calls an operation: the status it needs, and what the request's checks allow (errosDaRequisicao). */
type OpcoesDaChamada = Opcoes & { status?: number; alemDoDocumento?: boolean; tolerada?: boolean };

/**
 * A service's real answers checked against its own OpenAPI 3.1 document (JSON Schema 2020-12, so
 * `type: [..., "null"]` and no `nullable`): each status must be documented for the operation, in
 * the media type the document gives, and the body must validate against the documented schema,
 * formats included; a documented header must be sent, with the documented value when there is one.
 * The requests are checked too (errosDaRequisicao). `cobertas` keeps the operations answered with a
 * documented success.
 */
export function conformidadeDe(base: string, doc: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // the document's `#/components/...` references, resolved against the document itself
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const compilados = new Map<string, ValidateFunction>();
  const cobertas = new Set<string>();
  /** the answers and requests that do not conform, all of them kept so one run reports every mismatch */
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

  // a parameter's text read as a validator built from the document reads it: turned into its schema's type
  const ajvDosParametros = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  addFormats(ajvDosParametros);

  /**
   * Why the document refuses a request's path and query parameters, each with the parameter: a
   * required one missing, an empty value (`nome=`, in OpenAPI's form style) where it does not say
   * `allowEmptyValue`, or a value its schema refuses once read as the schema's type (a query string
   * is text: `2` is the integer 2, `true` the boolean).
   */
  function recusasDosParametros(op: string, params: Record<string, string>, query: Opcoes['query'] = {}): { parametro: any; recusa: string }[] {
    return (operacao(op).parameters ?? []).flatMap((p: any) => {
      const recusa = (r: string) => ({ parametro: p, recusa: r });
      if (p.in !== 'path' && p.in !== 'query') return [];
      const valor = p.in === 'path' ? params[p.name] : query[p.name];
      if (valor === undefined) return p.required ? [recusa(`${p.name} is required`)] : [];
      const texto = String(valor);
      if (texto === '') return p.allowEmptyValue ? [] : [recusa(`${p.name}: an empty value is not allowed`)];
      const chave = `${op} ${p.in} ${p.name}`;
      let validar = compilados.get(chave);
      if (!validar) compilados.set(chave, (validar = ajvDosParametros.compile(p.schema)));
      return validar(texto) ? [] : (validar.errors ?? []).map((e) => recusa(`${p.name}=${JSON.stringify(texto)} ${e.message}`));
    });
  }

  /** Why the document refuses a JSON body. */
  function recusasDoCorpo(op: string, corpo: unknown): string[] {
    if (corpo === undefined) return [];
    const schema = operacao(op).requestBody?.content?.['application/json']?.schema;
    if (!schema) return ['a JSON body the document does not describe'];
    const validar = validador(`${op} corpo`, schema);
    return validar(corpo) ? [] : (validar.errors ?? []).map((e) => `body ${e.instancePath || '(raiz)'} ${e.message}`);
  }

  /**
   * A request the service took must be one its document allows, parameters and JSON body alike; one
   * it refused as malformed (400) one the document refuses too, unless the refusal depends on what
   * no schema says (`alemDoDocumento`: an event's data against its version's own schema, a CNPJ's
   * check digits). A document states a parameter's canonical form and describes what else the
   * service takes (api/shared/openapi.ts, tolerancias): a request written in such a form
   * (`tolerada`: spaces around, another letter case, a mask, a decimal comma) must be taken, and a
   * parameter its document refuses there must say in its description what else it takes.
   */
  function errosDaRequisicao(op: string, params: Record<string, string>, o: OpcoesDaChamada, res: Resposta): string[] {
    if (o.tolerada && res.status >= 300) return [`${op} refused with ${res.status} a form it tolerates: ${JSON.stringify({ params, query: o.query })}`];
    const dosParametros = recusasDosParametros(op, params, o.query).filter(({ parametro }) => !o.tolerada || !/Também aceita/.test(parametro.description ?? ''));
    const recusas = [...dosParametros.map((r) => r.recusa), ...recusasDoCorpo(op, o.body)];
    if (res.status < 300) return recusas.map((r) => `${op} took a request its document refuses: ${r}`);
    if (res.status === 400 && !recusas.length && !o.alemDoDocumento) {
      return [`${op} refused with 400 a request its document allows: ${JSON.stringify({ params, query: o.query, body: o.body }).slice(0, 300)}`];
    }
    return [];
  }

  /** The documented headers of an answer missing from `res`, or with another value than the one documented. */
  function errosDosCabecalhos(op: string, res: Resposta, documentada: any): string[] {
    return Object.entries<any>(documentada.headers ?? {}).flatMap(([nome, cabecalho]) => {
      const recebido = res.headers.get(nome);
      if (recebido === null) return cabecalho.required ? [`${op} ${res.status} lacks its documented ${nome} header`] : [];
      const aceitos: unknown[] | undefined = cabecalho.schema?.const !== undefined ? [cabecalho.schema.const] : cabecalho.schema?.enum;
      return aceitos && !aceitos.includes(recebido) ? [`${op} ${res.status} sent ${nome}: ${recebido}, documented ${aceitos.join(' or ')}`] : [];
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
    o: OpcoesDaChamada = {},
  ): Promise<Resposta> {
    const [metodo, caminho] = op.split(' ');
    const url = caminho.replace(/\{(\w+)\}/g, (_, nome: string) => {
      if (params[nome] === undefined) throw new Error(`${op}: no value for {${nome}}`);
      return encodeURIComponent(params[nome]);
    });
    const res = await chamar(base, metodo, url, o);
    const problemas = [...erros(op, res), ...errosDaRequisicao(op, params, o, res)];
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
