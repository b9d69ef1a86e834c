import Joi from 'joi';
import { booleano } from '../shared/paginacao';

/** Filters of GET /api/empresas (DESIGN §6), normalized: codes padded, masks removed. */
export interface FiltrosDeEmpresas {
  uf?: string;
  municipio?: string;
  cnae?: string;
  cnae_secundaria?: string;
  situacao_cadastral?: string;
  natureza_juridica?: string;
  porte?: string;
  matriz_filial?: string;
  opcao_simples?: 'S' | 'N';
  opcao_mei?: 'S' | 'N';
  data_inicio_de?: string;
  data_inicio_ate?: string;
  /** DECIMAL text with 2 decimals (`1000.50`) */
  capital_social_min?: string;
  capital_social_max?: string;
  ddd?: string;
  tem_email?: boolean;
  tem_telefone?: boolean;
  cep?: string;
  nome?: string;
}

/**
 * Digits only (mask characters `. / -` as in `6204-0/00` or `70.836-900` are dropped; anything else is refused), then left-padded.
 * `permitidos`: the only codes the Receita uses, when it has a fixed few (checked once padded: `2` is `02`).
 */
const codigo = (tamanho: number, descricao: string, minimo = 1, permitidos?: string[]) => {
  const forma = new RegExp(`^[0-9]{${minimo},${tamanho}}$`);
  return Joi.string()
    .trim()
    .empty('')
    .replace(/[.\/\-\s]/g, '')
    .pattern(forma)
    .messages({ 'string.pattern.base': `{{#label}} deve ter ${minimo === tamanho ? tamanho : `de ${minimo} a ${tamanho}`} dígitos` })
    .custom((v: string, h) => {
      const c = v.padStart(tamanho, '0');
      // a value of the wrong form was already named by the pattern
      return !permitidos || !forma.test(v) || permitidos.includes(c) ? c : h.error('any.only', { valids: permitidos });
    })
    .description(descricao);
};

/** The Receita's S/N, or DESIGN §4's booleans, `true` for S and `false` for N. */
const simNao = (descricao: string) =>
  Joi.string().trim().empty('').uppercase().replace(/^TRUE$/, 'S').replace(/^FALSE$/, 'N').valid('S', 'N').description(`${descricao}; true/false também`);

const FORMA_DA_DATA = /^\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$/;

/** A day of the calendar: `20230231` has the form and is no date. */
const diaExiste = (v: string) => {
  const dia = new Date(Date.UTC(Number(v.slice(0, 4)), Number(v.slice(4, 6)) - 1, Number(v.slice(6))));
  return dia.getUTCDate() === Number(v.slice(6));
};

const data = (descricao: string) =>
  Joi.string()
    .trim()
    .empty('')
    .pattern(FORMA_DA_DATA)
    // every rule runs (abortEarly off): a value of the wrong form was already named by the pattern
    .custom((v: string, h) => (!FORMA_DA_DATA.test(v) || diaExiste(v) ? v : h.error('string.pattern.base')))
    .messages({ 'string.pattern.base': '{{#label}} deve ser uma data AAAAMMDD' })
    .description(descricao);

/**
 * Accepts a decimal comma or point, no thousands separator. Kept as DECIMAL text with 2 decimals
 * (`1000.50`, one key however written), never a JS number: a double holds 15 to 17 digits, and the
 * column 20 (`1234567890123456,78` would read as `…456,8`).
 */
const FORMA_DO_VALOR = /^\d{1,18}(\.\d{1,2})?$/;
const valor = (descricao: string) =>
  Joi.string()
    .trim()
    .empty('')
    .replace(',', '.')
    .pattern(FORMA_DO_VALOR)
    .messages({ 'string.pattern.base': '{{#label}} deve ser um valor como 1000,50' })
    // every rule runs (abortEarly off): a value the pattern refused is left as it came, so a range's
    // other end does not take it for a number
    .custom((v: string) => {
      if (!FORMA_DO_VALOR.test(v)) return v;
      const [inteiro, centavos = ''] = v.split('.');
      return `${inteiro.replace(/^0+(?=\d)/, '')}.${centavos.padEnd(2, '0')}`;
    })
    .description(descricao);

/**
 * The upper end of a range (`data_inicio_ate`, `capital_social_max`) below its lower end would match
 * nothing: refused, naming both, rather than answered with an empty page. The lower end is a joi
 * ref, so it is converted first and both compare as the filter keeps them (`1000.50`, `20200101`);
 * `emOrdem` gives a value's place, or undefined for a lower end that is itself invalid (named alone).
 */
const Faixas = Joi.extend((joi) => ({
  type: 'string',
  base: joi.string(),
  messages: { 'faixa.invertida': '{{#label}} é menor que {{#de}}: a faixa está invertida' },
  rules: {
    naoAbaixoDe: {
      method(de: string, emOrdem: (v: string) => bigint | undefined) {
        return this.$_addRule({ name: 'naoAbaixoDe', args: { inicio: Joi.ref(de), de, emOrdem } });
      },
      // the lower end is text once its own schema has read it; anything else (absent, or a value
      // its own schema refused, such as a repeated parameter) is named by that schema alone
      args: [{ name: 'inicio', ref: true, assert: Joi.any() }, 'de', 'emOrdem'],
      validate(v: string, h, { inicio, de, emOrdem }) {
        const a = typeof inicio === 'string' ? emOrdem(inicio) : undefined;
        const b = emOrdem(v);
        return a === undefined || b === undefined || a <= b ? v : h.error('faixa.invertida', { de });
      },
    },
  },
})) as typeof Joi;

type ComFaixa = Joi.StringSchema & { naoAbaixoDe(de: string, emOrdem: (v: string) => bigint | undefined): Joi.StringSchema };
/** `ate` is the upper end of the range that starts at the key `de`. */
const fimDaFaixa = (ate: Joi.StringSchema, de: string, emOrdem: (v: string) => bigint | undefined) =>
  (Faixas.string() as ComFaixa).concat(ate as ComFaixa).naoAbaixoDe(de, emOrdem);

/** A place only for what the field itself takes: a day that is no date has none */
const ordemDaData = (v: string) => (FORMA_DA_DATA.test(v) && diaExiste(v) ? BigInt(v) : undefined);
/** in cents: the DECIMAL text always has 2 decimals */
const ordemDoValor = (v: string) => (/^\d+\.\d{2}$/.test(v) ? BigInt(v.replace('.', '')) : undefined);

/** InnoDB's innodb_ft_max_token_size, MariaDB's and MySQL's default. */
const MAIOR_PALAVRA_INDEXADA = 84;
/** The longest `nome` a search takes. */
const MAIOR_NOME = 150;

export const UFS = ['AC', 'AL', 'AM', 'AP', 'BA', 'CE', 'DF', 'ES', 'GO', 'MA', 'MG', 'MS', 'MT', 'PA', 'PB', 'PE', 'PI', 'PR', 'RJ', 'RN', 'RO', 'RR', 'RS', 'SC', 'SE', 'SP', 'TO', 'EX'];

export const esquemaDosFiltros = {
  uf: Joi.string().trim().empty('').uppercase().valid(...UFS).description('UF do estabelecimento (EX: exterior)'),
  municipio: codigo(4, 'código do município na Receita (tabela Municipios)'),
  cnae: codigo(7, 'CNAE fiscal principal', 7),
  cnae_secundaria: codigo(7, 'um dos CNAEs secundários', 7),
  situacao_cadastral: codigo(2, 'situação cadastral: 01 nula, 02 ativa, 03 suspensa, 04 inapta, 08 baixada', 1, ['01', '02', '03', '04', '08']),
  natureza_juridica: codigo(4, 'natureza jurídica da empresa', 4),
  porte: codigo(2, 'porte da empresa: 00 não informado, 01 micro, 03 pequeno porte, 05 demais', 1, ['00', '01', '03', '05']),
  matriz_filial: Joi.string().trim().empty('').valid('1', '2').description('1 matriz, 2 filial'),
  opcao_simples: simNao('optante pelo Simples Nacional (S) ou não (N)'),
  opcao_mei: simNao('optante pelo MEI (S) ou não (N)'),
  data_inicio_de: data('início de atividade a partir de (AAAAMMDD)'),
  data_inicio_ate: fimDaFaixa(data('início de atividade até (AAAAMMDD), não antes de data_inicio_de'), 'data_inicio_de', ordemDaData),
  capital_social_min: valor('capital social mínimo'),
  capital_social_max: fimDaFaixa(valor('capital social máximo, não abaixo de capital_social_min'), 'capital_social_min', ordemDoValor),
  // as the import stores it (receita.ts): zeros on the left dropped (`011` is `11`); no DDD starts with 0
  ddd: Joi.string()
    .trim()
    .empty('')
    .pattern(/^0*[1-9][0-9]$/)
    .messages({ 'string.pattern.base': '{{#label}} deve ser um DDD de 2 dígitos (zeros à esquerda são ignorados)' })
    .custom((v: string) => v.slice(-2))
    .description('DDD de um dos telefones (2 dígitos; zeros à esquerda são ignorados)'),
  tem_email: booleano().description('com (true) ou sem (false) e-mail'),
  tem_telefone: booleano().description('com (true) ou sem (false) telefone'),
  cep: Joi.string()
    .trim()
    .empty('')
    .replace(/[.\/\-\s]/g, '')
    .pattern(/^[0-9]{1,8}$/)
    .messages({ 'string.pattern.base': '{{#label}} deve ter de 1 a 8 dígitos' })
    .description('início do CEP'),
  nome: Joi.string()
    // composed first: the registry's names arrive composed (ISO-8859-1), and a combining accent
    // typed apart would cut "são" into words too short to search
    .normalize('NFC')
    .trim()
    .empty('')
    .max(MAIOR_NOME)
    // a longer word is left out of the index and of a search (innodb_ft_max_token_size): a search
    // for it would match as if it were not there, so every name that has the other words (a text
    // over the length is refused by max() alone)
    .custom((v: string, h) =>
      v.length <= MAIOR_NOME && palavrasDoNome(v).some((p) => p.length > MAIOR_PALAVRA_INDEXADA) ? h.error('nome.palavraLonga') : v,
    )
    .messages({ 'nome.palavraLonga': `{{#label}} tem uma palavra de mais de ${MAIOR_PALAVRA_INDEXADA} letras, que a busca não alcança` })
    .description('palavras da razão social ou do nome fantasia'),
};

export interface Condicoes {
  onde: string;
  parametros: unknown[];
}

/**
 * Words as InnoDB's full-text parser cuts them: letters, digits and `_` (`ABC_DEF` is one word, so
 * `abc_def` must be one too). It skips words shorter than 3 characters and the words of its
 * default stopword list; a required word it never indexed would match nothing ("casa com arte").
 */
const NAO_INDEXADAS = new Set(
  'about are com for from how that the this was what when where who will with und www'.split(' '),
);
/** compared as the index's collation compares: without case or accent (`cóm` is the skipped `com`) */
const naoIndexada = (palavra: string) => NAO_INDEXADAS.has(palavra.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase());
const palavrasDoNome = (nome: string) => nome.split(/[^\p{L}\p{N}_]+/u).filter((p) => p.length >= 3 && !naoIndexada(p));

/**
 * A `nome` as a full-text search in boolean mode (every indexed word, each as a prefix), or
 * undefined when it has only short words, which no full-text index serves.
 */
export function buscaDoNome(nome: string): string | undefined {
  const palavras = palavrasDoNome(nome);
  return palavras.length ? palavras.map((p) => `+${p}*`).join(' ') : undefined;
}

/**
 * The WHERE of a filter set over `estabelecimento e`. Company and Simples filters are semi-joins on
 * their own tables (indexed), so the listing keeps reading establishments in CNPJ order.
 * `nomeEm`: the establishments the `nome` filter names, when they were listed beforehand
 * (busca-por-nome.ts); without it the name is matched row by row.
 */
export function condicoesDosFiltros(f: FiltrosDeEmpresas, nomeEm?: string[]): Condicoes {
  const onde: string[] = [];
  const parametros: unknown[] = [];
  const igual = (coluna: string, v: unknown) => {
    if (v === undefined) return;
    onde.push(`${coluna} = ?`);
    parametros.push(v);
  };
  igual('e.uf', f.uf);
  igual('e.municipio', f.municipio);
  igual('e.cnae_fiscal_principal', f.cnae);
  igual('e.situacao_cadastral', f.situacao_cadastral);
  igual('e.identificador_matriz_filial', f.matriz_filial);
  if (f.cnae_secundaria) {
    // and in the establishment's own list: a CNPJ the month's files repeat keeps its first row, but
    // the secondary CNAEs of every row were loaded, so a later row's codes would find the first
    // row's record, which does not list them
    onde.push(
      'e.cnpj IN (SELECT cs.cnpj FROM estabelecimento_cnae_secundaria cs WHERE cs.cnae = ?)' +
        " AND CONCAT(',', REPLACE(e.cnae_fiscal_secundaria, ' ', ''), ',') LIKE ?",
    );
    parametros.push(f.cnae_secundaria, `%,${f.cnae_secundaria},%`);
  }
  if (f.data_inicio_de) (onde.push('e.data_inicio_atividade >= ?'), parametros.push(f.data_inicio_de));
  if (f.data_inicio_ate) (onde.push('e.data_inicio_atividade <= ?'), parametros.push(f.data_inicio_ate));
  if (f.ddd) (onde.push('(e.ddd_1 = ? OR e.ddd_2 = ?)'), parametros.push(f.ddd, f.ddd));
  if (f.cep) (onde.push('e.cep LIKE ?'), parametros.push(`${f.cep}%`));
  if (f.tem_email !== undefined) onde.push(f.tem_email ? 'e.correio_eletronico IS NOT NULL' : 'e.correio_eletronico IS NULL');
  if (f.tem_telefone !== undefined) {
    onde.push(f.tem_telefone ? '(e.telefone_1 IS NOT NULL OR e.telefone_2 IS NOT NULL)' : '(e.telefone_1 IS NULL AND e.telefone_2 IS NULL)');
  }

  const daEmpresa: string[] = [];
  const parametrosDaEmpresa: unknown[] = [];
  if (f.natureza_juridica) (daEmpresa.push('em.natureza_juridica = ?'), parametrosDaEmpresa.push(f.natureza_juridica));
  if (f.porte) (daEmpresa.push('em.porte_empresa = ?'), parametrosDaEmpresa.push(f.porte));
  // as DECIMAL: a DECIMAL column against text would compare both as doubles
  if (f.capital_social_min !== undefined) (daEmpresa.push('em.capital_social >= CAST(? AS DECIMAL(20,2))'), parametrosDaEmpresa.push(f.capital_social_min));
  if (f.capital_social_max !== undefined) (daEmpresa.push('em.capital_social <= CAST(? AS DECIMAL(20,2))'), parametrosDaEmpresa.push(f.capital_social_max));
  if (daEmpresa.length) {
    onde.push(`e.cnpj_basico IN (SELECT em.cnpj_basico FROM empresa em WHERE ${daEmpresa.join(' AND ')})`);
    parametros.push(...parametrosDaEmpresa);
  }

  // Opting out (N) includes companies that never had a Simples record.
  for (const [v, coluna] of [
    [f.opcao_simples, 'opcao_pelo_simples'],
    [f.opcao_mei, 'opcao_pelo_mei'],
  ] as const) {
    if (v === undefined) continue;
    onde.push(`e.cnpj_basico ${v === 'S' ? 'IN' : 'NOT IN'} (SELECT si.cnpj_basico FROM simples si WHERE si.${coluna} = 'S')`);
  }

  if (f.nome && nomeEm) {
    onde.push(nomeEm.length ? 'e.cnpj IN (?)' : 'FALSE');
    if (nomeEm.length) parametros.push(nomeEm);
  } else if (f.nome) {
    const busca = buscaDoNome(f.nome);
    if (busca) {
      onde.push(`(MATCH(e.nome_fantasia) AGAINST (? IN BOOLEAN MODE)
        OR e.cnpj_basico IN (SELECT em.cnpj_basico FROM empresa em WHERE MATCH(em.razao_social) AGAINST (? IN BOOLEAN MODE)))`);
      parametros.push(busca, busca);
    } else {
      // Only short words: a prefix of either name.
      onde.push('(e.nome_fantasia LIKE ? OR e.cnpj_basico IN (SELECT em.cnpj_basico FROM empresa em WHERE em.razao_social LIKE ?))');
      const prefixo = `${f.nome.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      parametros.push(prefixo, prefixo);
    }
  }
  return { onde: onde.length ? `WHERE ${onde.join(' AND ')}` : '', parametros };
}

/**
 * A letter as the tables' collation (utf8mb4_unicode_ci, which compares without case or accent)
 * weighs it: an ASCII letter, bare or with combining accents (À to ſ decomposed), is that letter
 * in lower case. Any other character stays as written: what the collation makes of it is not
 * known here, and two keys for one search only cost a second count.
 */
function letraNaChave(c: string): string {
  const decomposta = c.normalize('NFD');
  return /^[A-Za-z][\u0300-\u036f]*$/.test(decomposta) ? decomposta[0].toLowerCase() : c;
}
const naChave = (texto: string) => texto.replace(/[A-Za-z\u00C0-\u017F]/g, letraNaChave);

/**
 * `nome` as its search reads it (condicoesDosFiltros), so spellings the database answers alike
 * share a key (a count's, a name's list in busca-por-nome.ts): through the full-text indexes only
 * the indexed words count, all required, in any order; a prefix (short words only) counts every
 * character but case and accents, spaces between words included (LIKE compares them one by one).
 */
export function nomeNaChave(nome: string): { palavras: string[] } | { prefixo: string } {
  const palavras = palavrasDoNome(nome);
  return palavras.length ? { palavras: [...new Set(palavras.map(naChave))].sort() } : { prefixo: naChave(nome) };
}

/** The filter set's stable key (cache and job id): its non-empty values in name order. */
export function chaveDosFiltros(f: FiltrosDeEmpresas): string {
  const pares = Object.entries({ ...f, nome: f.nome === undefined ? undefined : nomeNaChave(f.nome) })
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify(Object.fromEntries(pares));
}
