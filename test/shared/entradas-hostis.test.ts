import { iniciarWorkers } from '../../lib/runner';
import { FILAS } from '../../queues';
import { chamar } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { hubDe } from '../hub/apoio-admin';
import { eventoDeMensagem, idDoSuporte, salesDe } from '../sales/apoio';

/**
 * Bad input gets a clear problem+json error, never a 5xx: every operation each service documents
 * in its OpenAPI document, called with the token it takes, is given odd path and query values (one
 * parameter at a time, repeated, nested), bodies of every JSON kind, and bodies valid in every
 * field but one that holds an odd value. Each answer must be below 500 and, when a 4xx, an RFC 9457
 * problem (DESIGN §4). Path ids are real ones where the collection lists any (a record of each kind
 * is made first), so the odd bodies reach the handlers, not only the 404; and each operation must
 * answer something other than 401 and 403 at least once (the token it was given is the one it takes).
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
  // letters and digits only: it passes as a name and as an id alike
  return `hostil${++n}`;
}

test('every documented operation answers odd path, query and body values with a problem+json 4xx, never a 5xx', async () => {
  const identity = identityDe(suite.url.identity);
  const app = await identity.criarAplicativo();
  const tokens: Record<string, string> = { usuario: await identity.admin(), aplicativo: app.token };
  tokens.usuario_ou_aplicativo = tokens.usuario;
  // a record of each kind the routes read by id: the walk finds them in their collections
  const hub = hubDe(suite);
  const [dono, assinante] = await hub.aplicativos(`Dono ${Date.now()}`, `Assinante ${Date.now()}`);
  await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: (await hub.criarTipo(dono.id, { versoes: 1 })).id });
  const sales = salesDe(suite);
  await sales.registrar(await sales.criarSistema('suporte'), eventoDeMensagem({ conversa: idDoSuporte() }));
  await sales.criar('cliente', { razao_social: 'Cliente Hostil' });
  await sales.criar('robo', { nome: 'Robo Hostil' });
  const envio = await chamar(suite.url.files, 'POST', '/arquivo', { token: app.token, query: { nome: 'a.txt' }, raw: 'a', headers: { 'content-type': 'text/plain' } });
  expect(envio.status).toBe(201);

  const falhas: string[] = [];
  const soRecusadas: string[] = [];
  let chamadas = 0;
  let aceitas = 0;
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
        let alemDaPorta = false;
        const enviar = async (c: string, corpo?: string, tipo = 'application/json') => {
          chamadas++;
          const headers: Record<string, string> = { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
          if (corpo !== undefined) headers['content-type'] = tipo;
          const res = await fetch(base + c, { method: metodo.toUpperCase(), headers, body: corpo, redirect: 'manual' });
          const texto = await res.text();
          const onde = `${nome} ${metodo.toUpperCase()} ${c.slice(0, 120)} ${corpo?.slice(0, 80) ?? ''}`;
          if (res.status !== 401 && res.status !== 403) alemDaPorta = true;
          if (res.status < 300) aceitas++;
          if (res.status >= 500) falhas.push(`${onde} -> ${res.status} ${texto.slice(0, 200)}`);
          else if (res.status >= 400 && !/^application\/problem\+json/.test(res.headers.get('content-type') ?? '')) falhas.push(`${onde} -> ${res.status} not a problem`);
        };
        const com = (valor: string) => doCaminho.reduce((c, p) => c.replace(`{${p.name}}`, encodeURIComponent(valor)), caminho);

        for (const t of doCaminho.length ? TEXTOS.filter(Boolean) : []) await enviar(com(t), comCorpo);
        // each path parameter in turn: an id its collection lists (a version's number), or one of none
        let real = caminho;
        for (const p of doCaminho) {
          let valor = p.schema?.type === 'integer' ? '1' : '019a0000-0000-7000-8000-000000000000';
          const colecao = real.slice(0, real.indexOf(`/{${p.name}}`));
          if (metodo !== 'delete' && p.schema?.type !== 'integer') {
            const lista = await chamar(base, 'GET', colecao, { token });
            const item = Array.isArray(lista.body) ? lista.body[0] : lista.body?.itens?.[0];
            if (item?.id) valor = item.id;
          }
          real = real.replace(`{${p.name}}`, encodeURIComponent(valor));
        }
        for (const p of params.filter((x) => x.in === 'query')) {
          for (const t of TEXTOS) await enviar(`${real}?${p.name}=${encodeURIComponent(t)}`, comCorpo);
          await enviar(`${real}?${p.name}=1&${p.name}=2`, comCorpo);
          await enviar(`${real}?${p.name}[a]=1`, comCorpo);
        }
        if (esquema) {
          for (const c of CORPOS) await enviar(real, c);
          await enviar(real, 'a=1', 'application/x-www-form-urlencoded');
          await enviar(real, JSON.stringify(valido(esquema, '')));
          for (const k of Object.keys(esquema.properties ?? {})) {
            for (const v of VALORES) await enviar(real, JSON.stringify({ ...(valido(esquema, '') as object), [k]: v }));
          }
        } else if (!doCaminho.length && !params.some((x) => x.in === 'query')) {
          await enviar(real);
        }
        if (token && !alemDaPorta) soRecusadas.push(`${nome} ${metodo.toUpperCase()} ${caminho}`);
      }
    }
  }
  expect(falhas).toEqual([]);
  // every operation let its token in at least once, and some of the odd requests were taken whole
  // (POST /conversa answers 403 to every token: SPEC 4.6 rule 2)
  expect(soRecusadas).toEqual(['sales POST /conversa']);
  expect({ chamadas: chamadas > 5000, aceitas: aceitas > 200 }).toEqual({ chamadas: true, aceitas: true });
}, 300_000);
