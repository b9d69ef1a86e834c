import { iniciarWorkers } from '../../lib/runner';
import { FILAS } from '../../queues';
import { chamar } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * Bad input gets a clear problem+json error, never a 5xx: every operation each service documents
 * in its OpenAPI document, called with the token it takes, is given odd path and query values (one
 * parameter at a time, repeated, nested), bodies of every JSON kind, and bodies valid in every
 * field but one that holds an odd value. Each answer must be below 500 and, when a 4xx, an RFC 9457
 * problem (DESIGN §4). Path ids are real ones where the collection lists any, so the odd bodies
 * reach the handlers, not only the 404.
 */

let suite: SuiteDeTeste;
const SERVICOS = ['identity', 'leads', 'intranet', 'hub', 'sales', 'files'] as const;

beforeAll(async () => {
  suite = await iniciarSuite([...SERVICOS], { workers: false, env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '1000000', IDENTITY_LOGIN_LIMITE_POR_MINUTO: '1000000' } });
  // the syncs a master's listing waits for and the counts of the pages; deliveries and copies stay queued
  await iniciarWorkers(FILAS.filter((f) => /-sync$|-contagem$/.test(f.nome)).map((f) => f.nome));
});
afterAll(() => suite?.encerrar());

const TEXTOS = ['', ' ', '\u0000', 'x'.repeat(3000), '-1', '99999999999999999999999', '1e308', 'NaN', '[]', '%', '../..', "' OR 1=1 --", '😀', 'null', 'é'.repeat(300), '2026-13-45', 'a,b,,c'];
const VALORES: unknown[] = [null, true, 0, -1, 1.5, 1e308, 2 ** 53 + 1, 'x'.repeat(3000), '', ' ', [1, 'a'], { a: { b: [] } }, '😀', '\u0000', '2026-01-01T00:00:00Z'];
const CORPOS = ['null', '[]', '"texto"', '123', '{}', '{"__proto__": {"polui": 1}}', '{"constructor": {"prototype": {"polui": 1}}}', '{"a":'];

let n = 0;
/** A value the schema takes, as far as its type and format say (references to records point at none). */
function valido(schema: any, nome: string): unknown {
  if (!schema) return 'x';
  if (schema.enum) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf || schema.oneOf) return valido((schema.anyOf ?? schema.oneOf).find((s: any) => s.type !== 'null'), nome);
  const tipo = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (tipo === 'integer' || tipo === 'number') return schema.minimum ?? 1;
  if (tipo === 'boolean') return true;
  if (tipo === 'array') return [];
  if (tipo === 'object') {
    const obrigatorios = Object.entries<any>(schema.properties ?? {}).filter(([k]) => (schema.required ?? []).includes(k));
    return Object.fromEntries(obrigatorios.map(([k, v]) => [k, valido(v, k)]));
  }
  if (schema.format === 'email' || /email/.test(nome)) return `hostil${++n}@suite.test`;
  if (schema.format === 'uri' || /url/.test(nome)) return 'https://exemplo.test/x';
  if (/senha|segredo|token/.test(nome)) return 'Senha-Forte-0123456789-abcdefghijklmnopqrstuvwxyz';
  return `Hostil ${++n}`;
}

test('every documented operation answers odd path, query and body values with a problem+json 4xx, never a 5xx', async () => {
  const identity = identityDe(suite.url.identity);
  const tokens: Record<string, string> = { usuario: await identity.admin(), aplicativo: (await identity.criarAplicativo()).token };
  tokens.usuario_ou_aplicativo = tokens.usuario;
  const falhas: string[] = [];
  let chamadas = 0;
  for (const nome of SERVICOS) {
    const base = suite.url[nome];
    const { paths } = (await chamar(base, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    for (const [caminho, ops] of Object.entries(paths)) {
      for (const [metodo, op] of Object.entries(ops)) {
        if (metodo === 'head') continue;
        const token = op['x-acesso'] ? tokens[op['x-acesso']] : undefined;
        const params: any[] = op.parameters ?? [];
        const doCaminho = params.filter((p) => p.in === 'path');
        const esquema = op.requestBody?.content?.['application/json']?.schema;
        const comCorpo = esquema ? '{}' : undefined;
        const enviar = async (c: string, corpo?: string, tipo = 'application/json') => {
          chamadas++;
          const headers: Record<string, string> = { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
          if (corpo !== undefined) headers['content-type'] = tipo;
          const res = await fetch(base + c, { method: metodo.toUpperCase(), headers, body: corpo, redirect: 'manual' });
          const texto = await res.text();
          const onde = `${nome} ${metodo.toUpperCase()} ${c.slice(0, 120)} ${corpo?.slice(0, 80) ?? ''}`;
          if (res.status >= 500) falhas.push(`${onde} -> ${res.status} ${texto.slice(0, 200)}`);
          else if (res.status >= 400 && !/^application\/problem\+json/.test(res.headers.get('content-type') ?? '')) falhas.push(`${onde} -> ${res.status} not a problem`);
        };
        const com = (valor: string) => doCaminho.reduce((c, p) => c.replace(`{${p.name}}`, encodeURIComponent(valor)), caminho);

        for (const t of doCaminho.length ? TEXTOS.filter(Boolean) : []) await enviar(com(t), comCorpo);
        let real = com('019a0000-0000-7000-8000-000000000000');
        if (doCaminho.length === 1 && metodo !== 'delete') {
          const lista = await chamar(base, 'GET', caminho.slice(0, caminho.indexOf('/{')), { token });
          const item = Array.isArray(lista.body) ? lista.body[0] : lista.body?.itens?.[0];
          if (item?.id) real = com(item.id);
        }
        for (const p of params.filter((x) => x.in === 'query')) {
          for (const t of TEXTOS) await enviar(`${real}?${p.name}=${encodeURIComponent(t)}`, comCorpo);
          await enviar(`${real}?${p.name}=1&${p.name}=2`, comCorpo);
          await enviar(`${real}?${p.name}[a]=1`, comCorpo);
        }
        if (!esquema) continue;
        for (const c of CORPOS) await enviar(real, c);
        await enviar(real, 'a=1', 'application/x-www-form-urlencoded');
        for (const k of Object.keys(esquema.properties ?? {})) {
          for (const v of VALORES) await enviar(real, JSON.stringify({ ...(valido(esquema, '') as object), [k]: v }));
        }
      }
    }
  }
  // the walk reached every service's operations
  expect(chamadas).toBeGreaterThan(5000);
  expect(falhas).toEqual([]);
}, 300_000);
