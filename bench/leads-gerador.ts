/**
 * Synthetic files in the exact layout of the Receita Federal's open CNPJ data ("Dados Abertos CNPJ"), for
 * the leads import benchmarks (never part of `npm test`).
 *
 *   npm run bench:leads-gerar -- <dir> [estabelecimentos] [--semente=N] [--arquivos=N]
 *   node -r ts-node/register/transpile-only bench/leads-gerador.ts <dir> [estabelecimentos]   (default 1,000,000)
 *
 * Layout, as in the real monthly dump: each .zip holds one CSV; no header row; `;` separator; every field in
 * double quotes (`""` = empty); `\n` line ends; ISO-8859-1 bytes; dates AAAAMMDD (`00000000`, rarely `0` or
 * empty, = no date); capital_social with a decimal comma and no thousands separator; codes as zero-padded
 * text. Files: Empresas{0..N-1}.zip, Estabelecimentos{0..N-1}.zip, Socios{0..N-1}.zip, Simples.zip and the
 * code tables Cnaes, Motivos, Municipios, Naturezas, Paises and Qualificacoes (.zip), with the real inner
 * names (`K3241.K03200Y0.D60110.EMPRECSV`, `F.K03200$Z.D60110.CNAECSV`...).
 *
 * Deterministic for a given (estabelecimentos, semente, arquivos): same bytes every run (fixed zip mtime).
 * `gerado.json` is written last; when it matches the parameters and the zips on disk, the generation is
 * reused instead of redone.
 *
 * Quirks kept on purpose, because the real files have them and the importer must cope:
 * - ~0.1% of code references (CNAE, município, natureza, qualificação, motivo, país) absent from the tables;
 * - names with doubled or trailing spaces; MEI razões sociais prefixed with the formatted CNPJ básico
 *   (`12.345.678 MARIA DA SILVA`); a rare `;` inside a quoted complemento;
 * - dates `0` and empty besides `00000000`; blank lines at the end of some files (always at the end of the
 *   last Estabelecimentos part);
 * - UF `EX` with município 9707 (EXTERIOR) and nome_cidade_exterior for companies abroad;
 * - a company's establishments may straddle two Estabelecimentos parts, and the Empresas/Socios parts are
 *   cut at other CNPJ boundaries than the Estabelecimentos parts.
 */
import { once } from 'events';
import { createWriteStream, promises as fs } from 'fs';
import * as path from 'path';
import { PassThrough } from 'stream';
import { ZipFile } from 'yazl';

export interface ResumoDaGeracao {
  dir: string;
  estabelecimentos: number;
  empresas: number;
  socios: number;
  simples: number;
  /** a sample of up to 10,000 existing 14-char CNPJs, evenly spread over the data */
  cnpjs: string[];
}

export interface OpcoesDaGeracao {
  estabelecimentos: number;
  semente?: number;
  /** how many Empresas/Estabelecimentos/Socios parts (default 4) */
  arquivos?: number;
}

/** Bump when the output changes, so that cached generations are redone. */
const VERSAO = 2;
const MANIFESTO = 'gerado.json';
/** Reference date of the dump (2026-01-10), as it appears in the real inner file names. */
const REF = 'D60110';
const MTIME = new Date('2026-01-10T03:00:00Z');
/** Speed matters more than size here: deflate level 1 is ~3x faster than the default 6. */
const NIVEL_DEFLATE = 1;
/**
 * CNPJs kept for the lookup benchmark, spread evenly over the data: enough that a run's lookups
 * (tens of thousands) read most of them once, as lookups of random existing CNPJs do, instead of
 * the same few thousand rows again and again, all in the buffer pool after the first reads.
 */
const MAX_AMOSTRA = 200_000;
/** Share of references to codes missing from the code tables (the real data has them). */
const P_DESCONHECIDO = 0.001;

// ---------------------------------------------------------------------------------------------------------
// Randomness and small helpers

/** mulberry32: tiny, fast, good enough for synthetic data, and reproducible from a 32-bit seed. */
class Sorteador {
  private a: number;
  constructor(semente: number) {
    this.a = semente >>> 0;
  }
  /** uniform in [0, 1) */
  r(): number {
    let t = (this.a = (this.a + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** integer in [0, n) */
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  /** integer in [min, max] */
  entre(min: number, max: number): number {
    return min + Math.floor(this.r() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  um<T>(lista: readonly T[]): T {
    return lista[Math.floor(this.r() * lista.length)];
  }
  /** log-uniform in [min, max): many small values, a few big ones (capital social, chain sizes) */
  logUniforme(min: number, max: number): number {
    return Math.exp(Math.log(min) + this.r() * (Math.log(max) - Math.log(min)));
  }
}

/** Weighted choice: cumulative weights + binary search (the tables have up to a few thousand items). */
class Tabela<T> {
  readonly itens: T[];
  private readonly acumulado: Float64Array;
  private readonly total: number;
  constructor(pares: ReadonlyArray<readonly [T, number]>) {
    this.itens = pares.map((p) => p[0]);
    this.acumulado = new Float64Array(pares.length);
    let soma = 0;
    pares.forEach((p, i) => (this.acumulado[i] = soma += p[1]));
    this.total = soma;
  }
  sortear(s: Sorteador): T {
    const x = s.r() * this.total;
    let lo = 0;
    let hi = this.acumulado.length - 1;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (this.acumulado[m] > x) hi = m;
      else lo = m + 1;
    }
    return this.itens[lo];
  }
}

/** Zipf-like popularity: the item at rank r weighs 1/(r + deslocamento). */
function zipf<T>(itens: readonly T[], deslocamento = 1, expoente = 1): Tabela<T> {
  return new Tabela(itens.map((x, r) => [x, 1 / Math.pow(r + deslocamento, expoente)] as const));
}

const pad = (n: number, largura: number) => String(n).padStart(largura, '0');
const semAcento = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
/** A CSV row in the Receita's format (values never contain `"`, so no escaping is needed). */
const linha = (campos: string[]) => '"' + campos.join('";"') + '"\n';

/** All dates from 1900-01-01 to the day before the reference date, as AAAAMMDD strings, by day index. */
const DIAS: string[] = (() => {
  const dias: string[] = [];
  const fim = Date.UTC(2026, 0, 10);
  for (let t = Date.UTC(1900, 0, 1); t < fim; t += 86_400_000) {
    const d = new Date(t);
    dias.push(`${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}`);
  }
  return dias;
})();
const ULTIMO_DIA = DIAS.length - 1;
const diaDe = (ano: number, mes = 1, dia = 1) => Math.round((Date.UTC(ano, mes - 1, dia) - Date.UTC(1900, 0, 1)) / 86_400_000);
const DIA_2005_11_03 = diaDe(2005, 11, 3); // mass re-registration date, very common in data_situacao_cadastral
const DIA_MEI = diaDe(2009, 7, 1); // MEI exists since July 2009
const DIA_SIMPLES = diaDe(2007, 7, 1); // Simples Nacional since July 2007

/** "No date": mostly `00000000`, rarely `0` or empty, as in the real files. */
function semData(s: Sorteador): string {
  const u = s.r();
  return u < 0.998 ? '00000000' : u < 0.999 ? '0' : '';
}
/** A day in [desde, ULTIMO_DIA]. */
const diaEntre = (s: Sorteador, desde: number, ate = ULTIMO_DIA) => (desde >= ate ? ate : s.entre(desde, ate));

// ---------------------------------------------------------------------------------------------------------
// CNPJ

const PESOS_DV1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const PESOS_DV2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
const DIGITOS = new Int32Array(13);

/** The real mod-11 check digits of the 12 first digits (básico + ordem). */
export function digitosVerificadores(basico: number, ordem: number): string {
  for (let i = 7, x = basico; i >= 0; i--, x = Math.floor(x / 10)) DIGITOS[i] = x % 10;
  for (let i = 11, x = ordem; i >= 8; i--, x = Math.floor(x / 10)) DIGITOS[i] = x % 10;
  let soma = 0;
  for (let i = 0; i < 12; i++) soma += DIGITOS[i] * PESOS_DV1[i];
  const dv1 = soma % 11 < 2 ? 0 : 11 - (soma % 11);
  DIGITOS[12] = dv1;
  soma = 0;
  for (let i = 0; i < 13; i++) soma += DIGITOS[i] * PESOS_DV2[i];
  const dv2 = soma % 11 < 2 ? 0 : 11 - (soma % 11);
  return `${dv1}${dv2}`;
}

// ---------------------------------------------------------------------------------------------------------
// Domain lists (accented forms; the plain forms are derived, since most real names carry no accents)

interface Uf {
  sigla: string;
  nome: string;
  peso: number;
  municipios: number;
  /** real cities first (capital at the head); the rest are made up */
  cidades: string[];
  ddds: number[];
  cep: [number, number]; // 5-digit CEP prefix range
}

// In the Receita's município code order (north to south, then the centre-west), with the real município
// counts and roughly the real share of establishments.
const UFS: Uf[] = [
  { sigla: 'RO', nome: 'RONDÔNIA', peso: 0.9, municipios: 52, cidades: ['PORTO VELHO', 'JI-PARANA', 'ARIQUEMES'], ddds: [69], cep: [76800, 76999] },
  { sigla: 'AC', nome: 'ACRE', peso: 0.3, municipios: 22, cidades: ['RIO BRANCO', 'CRUZEIRO DO SUL'], ddds: [68], cep: [69900, 69999] },
  { sigla: 'AM', nome: 'AMAZONAS', peso: 1.2, municipios: 62, cidades: ['MANAUS', 'PARINTINS', 'ITACOATIARA'], ddds: [92, 97], cep: [69000, 69299] },
  { sigla: 'RR', nome: 'RORAIMA', peso: 0.25, municipios: 15, cidades: ['BOA VISTA'], ddds: [95], cep: [69300, 69399] },
  { sigla: 'PA', nome: 'PARÁ', peso: 2.4, municipios: 144, cidades: ['BELEM', 'ANANINDEUA', 'SANTAREM', 'MARABA'], ddds: [91, 93, 94], cep: [66000, 68899] },
  { sigla: 'AP', nome: 'AMAPÁ', peso: 0.25, municipios: 16, cidades: ['MACAPA', 'SANTANA'], ddds: [96], cep: [68900, 68999] },
  { sigla: 'TO', nome: 'TOCANTINS', peso: 0.6, municipios: 139, cidades: ['PALMAS', 'ARAGUAINA', 'GURUPI'], ddds: [63], cep: [77000, 77999] },
  { sigla: 'MA', nome: 'MARANHÃO', peso: 1.7, municipios: 217, cidades: ['SAO LUIS', 'IMPERATRIZ', 'CAXIAS'], ddds: [98, 99], cep: [65000, 65999] },
  { sigla: 'PI', nome: 'PIAUÍ', peso: 1.1, municipios: 224, cidades: ['TERESINA', 'PARNAIBA', 'PICOS'], ddds: [86, 89], cep: [64000, 64999] },
  { sigla: 'CE', nome: 'CEARÁ', peso: 3.4, municipios: 184, cidades: ['FORTALEZA', 'CAUCAIA', 'JUAZEIRO DO NORTE', 'SOBRAL'], ddds: [85, 88], cep: [60000, 63999] },
  { sigla: 'RN', nome: 'RIO GRANDE DO NORTE', peso: 1.3, municipios: 167, cidades: ['NATAL', 'MOSSORO', 'PARNAMIRIM'], ddds: [84], cep: [59000, 59999] },
  { sigla: 'PB', nome: 'PARAÍBA', peso: 1.5, municipios: 223, cidades: ['JOAO PESSOA', 'CAMPINA GRANDE', 'SANTA RITA'], ddds: [83], cep: [58000, 58999] },
  { sigla: 'PE', nome: 'PERNAMBUCO', peso: 3.6, municipios: 185, cidades: ['RECIFE', 'JABOATAO DOS GUARARAPES', 'OLINDA', 'CARUARU', 'PETROLINA'], ddds: [81, 87], cep: [50000, 56999] },
  { sigla: 'AL', nome: 'ALAGOAS', peso: 1.1, municipios: 102, cidades: ['MACEIO', 'ARAPIRACA'], ddds: [82], cep: [57000, 57999] },
  { sigla: 'SE', nome: 'SERGIPE', peso: 0.8, municipios: 75, cidades: ['ARACAJU', 'NOSSA SENHORA DO SOCORRO'], ddds: [79], cep: [49000, 49999] },
  { sigla: 'BA', nome: 'BAHIA', peso: 5.4, municipios: 417, cidades: ['SALVADOR', 'FEIRA DE SANTANA', 'VITORIA DA CONQUISTA', 'CAMACARI', 'ITABUNA'], ddds: [71, 73, 74, 75, 77], cep: [40000, 48999] },
  { sigla: 'MG', nome: 'MINAS GERAIS', peso: 10.8, municipios: 853, cidades: ['BELO HORIZONTE', 'UBERLANDIA', 'CONTAGEM', 'JUIZ DE FORA', 'BETIM', 'MONTES CLAROS'], ddds: [31, 32, 33, 34, 35, 37, 38], cep: [30000, 39999] },
  { sigla: 'ES', nome: 'ESPÍRITO SANTO', peso: 2.1, municipios: 78, cidades: ['VITORIA', 'VILA VELHA', 'SERRA', 'CARIACICA'], ddds: [27, 28], cep: [29000, 29999] },
  { sigla: 'RJ', nome: 'RIO DE JANEIRO', peso: 8.6, municipios: 92, cidades: ['RIO DE JANEIRO', 'SAO GONCALO', 'DUQUE DE CAXIAS', 'NOVA IGUACU', 'NITEROI'], ddds: [21, 22, 24], cep: [20000, 28999] },
  { sigla: 'SP', nome: 'SÃO PAULO', peso: 27.5, municipios: 645, cidades: ['SAO PAULO', 'CAMPINAS', 'GUARULHOS', 'SAO BERNARDO DO CAMPO', 'SANTO ANDRE', 'OSASCO', 'RIBEIRAO PRETO', 'SOROCABA', 'SANTOS', 'SAO JOSE DOS CAMPOS'], ddds: [11, 12, 13, 14, 15, 16, 17, 18, 19], cep: [1000, 19999] },
  { sigla: 'PR', nome: 'PARANÁ', peso: 6.9, municipios: 399, cidades: ['CURITIBA', 'LONDRINA', 'MARINGA', 'PONTA GROSSA', 'CASCAVEL'], ddds: [41, 42, 43, 44, 45, 46], cep: [80000, 87999] },
  { sigla: 'SC', nome: 'SANTA CATARINA', peso: 5.0, municipios: 295, cidades: ['FLORIANOPOLIS', 'JOINVILLE', 'BLUMENAU', 'CHAPECO', 'ITAJAI'], ddds: [47, 48, 49], cep: [88000, 89999] },
  { sigla: 'RS', nome: 'RIO GRANDE DO SUL', peso: 6.6, municipios: 497, cidades: ['PORTO ALEGRE', 'CAXIAS DO SUL', 'CANOAS', 'PELOTAS', 'SANTA MARIA'], ddds: [51, 53, 54, 55], cep: [90000, 99999] },
  { sigla: 'MS', nome: 'MATO GROSSO DO SUL', peso: 1.4, municipios: 79, cidades: ['CAMPO GRANDE', 'DOURADOS', 'TRES LAGOAS'], ddds: [67], cep: [79000, 79999] },
  { sigla: 'MT', nome: 'MATO GROSSO', peso: 1.9, municipios: 141, cidades: ['CUIABA', 'VARZEA GRANDE', 'RONDONOPOLIS', 'SINOP'], ddds: [65, 66], cep: [78000, 78899] },
  { sigla: 'GO', nome: 'GOIÁS', peso: 3.9, municipios: 246, cidades: ['GOIANIA', 'APARECIDA DE GOIANIA', 'ANAPOLIS', 'RIO VERDE'], ddds: [62, 64], cep: [72800, 76799] },
  { sigla: 'DF', nome: 'DISTRITO FEDERAL', peso: 2.0, municipios: 1, cidades: ['BRASILIA'], ddds: [61], cep: [70000, 72799] },
];
const MUNICIPIO_EXTERIOR = '9707';

const PRENOMES = (
  'JOSÉ MARIA ANA JOÃO ANTÔNIO FRANCISCO CARLOS PAULO PEDRO LUCAS LUIZ MARCOS LUÍS GABRIEL RAFAEL DANIEL MARCELO ' +
  'BRUNO EDUARDO FELIPE RAIMUNDO RODRIGO MANOEL MATEUS ANDRÉ FERNANDO FÁBIO LEONARDO GUSTAVO GUILHERME LEANDRO ' +
  'TIAGO ANDERSON RICARDO MÁRCIO JORGE SEBASTIÃO ALEXANDRE ROBERTO EDSON DIEGO VITOR SÉRGIO CLÁUDIO JOSEFA ' +
  'ANTÔNIA ADRIANA JULIANA MÁRCIA FERNANDA PATRÍCIA ALINE SANDRA CAMILA AMANDA BRUNA JÉSSICA LETÍCIA JÚLIA ' +
  'LUCIANA VANESSA MARIANA GABRIELA VERA VITÓRIA LARISSA CLÁUDIA BEATRIZ LUANA RITA SÔNIA RENATA ELIANE SIMONE ' +
  'NATÁLIA FRANCISCA CRISTIANE CARLA DANIELA CONCEIÇÃO APARECIDA ROSÂNGELA TEREZINHA HELENA LÚCIA'
).split(' ');
const SOBRENOMES = (
  'SILVA SANTOS OLIVEIRA SOUZA RODRIGUES FERREIRA ALVES PEREIRA LIMA GOMES COSTA RIBEIRO MARTINS CARVALHO ' +
  'ALMEIDA LOPES SOARES FERNANDES VIEIRA BARBOSA ROCHA DIAS NASCIMENTO ANDRADE MOREIRA NUNES MARQUES MACHADO ' +
  'MENDES FREITAS CARDOSO RAMOS GONÇALVES SANTANA TEIXEIRA ARAÚJO PINTO CAVALCANTE MONTEIRO MOURA CORREIA ' +
  'BATISTA CAMPOS REIS BORGES MIRANDA MEDEIROS AZEVEDO MACEDO SIQUEIRA CASTRO CUNHA NOGUEIRA PIRES FARIAS ' +
  'BEZERRA AMARAL XAVIER MOTA BRITO SALES PEIXOTO VASCONCELOS ASSIS GUIMARÃES MAGALHÃES BRANDÃO FONSECA ' +
  'TAVARES PRADO QUEIROZ ARRUDA FIGUEIREDO CORDEIRO CONCEIÇÃO ASSUNÇÃO DAMIÃO JESUS PAIVA LEITE AGUIAR'
).split(' ');
const PARTICULAS = ['DA', 'DE', 'DOS', 'DAS', 'DO'];
const ATIVIDADES = [
  'COMÉRCIO DE ALIMENTOS', 'MATERIAIS DE CONSTRUÇÃO', 'TRANSPORTES', 'SERVIÇOS MÉDICOS', 'CONSULTORIA EMPRESARIAL',
  'ENGENHARIA', 'INFORMÁTICA', 'AUTO PEÇAS', 'CONFECÇÕES', 'DISTRIBUIDORA DE BEBIDAS', 'REPRESENTAÇÕES COMERCIAIS',
  'CONTABILIDADE', 'EVENTOS', 'MARKETING DIGITAL', 'COMÉRCIO VAREJISTA', 'SERVIÇOS ADMINISTRATIVOS', 'CONSTRUÇÕES',
  'LOGÍSTICA', 'ODONTOLOGIA', 'EDUCAÇÃO', 'TECNOLOGIA', 'AGROPECUÁRIA', 'IMÓVEIS', 'PARTICIPAÇÕES', 'ALIMENTOS',
  'RESTAURANTE', 'PANIFICADORA', 'FARMÁCIA', 'MODA', 'SEGURANÇA', 'LIMPEZA E CONSERVAÇÃO', 'ESTÉTICA', 'TURISMO',
  'METALÚRGICA', 'INDÚSTRIA E COMÉRCIO', 'IMPORTAÇÃO E EXPORTAÇÃO', 'ADMINISTRADORA DE BENS', 'SOLUÇÕES EM TI',
  'SAÚDE', 'ACADEMIA', 'COMÉRCIO DE VEÍCULOS', 'SERRALHERIA', 'VIDRAÇARIA', 'ÓTICA', 'PAPELARIA',
];
const TIPOS_NEGOCIO = [
  'PADARIA', 'MERCADINHO', 'AUTO PEÇAS', 'SALÃO', 'BAR E LANCHONETE', 'RESTAURANTE', 'FARMÁCIA', 'DEPÓSITO',
  'OFICINA', 'LOJA', 'DISTRIBUIDORA', 'CLÍNICA', 'ÓTICA', 'PAPELARIA', 'PET SHOP', 'AÇOUGUE', 'MADEIREIRA',
  'VIDRAÇARIA', 'ACADEMIA', 'STUDIO', 'ESCRITÓRIO', 'BOUTIQUE', 'EMPÓRIO', 'MERCEARIA', 'BAZAR', 'CHURRASCARIA',
  'PIZZARIA', 'SORVETERIA', 'LAVA JATO', 'BORRACHARIA', 'CONSTRUTORA', 'TRANSPORTADORA', 'IMOBILIÁRIA',
];
const PALAVRAS_FANTASIA = [
  'SÃO JORGE', 'BOA VISTA', 'NOVA ERA', 'SANTA LUZIA', 'TRÊS IRMÃOS', 'DO POVO', 'ALFA', 'PRIME', 'MASTER', 'TOP',
  'GLOBAL', 'BRASIL', 'UNIÃO', 'ESTRELA', 'ÁGUIA', 'PALMEIRAS', 'CENTRAL', 'SOL NASCENTE', 'BOM PREÇO', 'DA VILA',
  'DO ZÉ', 'DA MARIA', 'FAMÍLIA', 'REAL', 'IMPÉRIO', 'PARAÍSO', 'PONTO CERTO', 'EXPRESS', 'DIGITAL', 'VIDA',
  'BELLA', 'ARTE', 'NORTE', 'SUL', 'LESTE', 'OESTE', 'AMIGO', 'FÊNIX', 'CRISTAL', 'DIAMANTE', 'OURO', 'PRATA',
  'ESPERANÇA', 'VITÓRIA', 'HORIZONTE', 'PIONEIRA', 'MODELO', 'IDEAL', 'CONFIANÇA', 'ALIANÇA',
];
const LOGRADOUROS = [
  'SETE DE SETEMBRO', 'DOM PEDRO II', 'GETÚLIO VARGAS', 'XV DE NOVEMBRO', 'TIRADENTES', 'JOÃO PESSOA', 'BRASIL',
  'SANTOS DUMONT', 'RUI BARBOSA', 'DUQUE DE CAXIAS', 'MARECHAL DEODORO', 'FLORIANO PEIXOTO', 'PRESIDENTE VARGAS',
  'DAS FLORES', 'PRINCIPAL', 'SÃO JOSÉ', 'SÃO PAULO', 'CASTRO ALVES', 'JOSÉ BONIFÁCIO', 'PAULISTA',
  'BARÃO DO RIO BRANCO', 'PADRE ANCHIETA', 'CARLOS GOMES', 'OSVALDO CRUZ', 'DA INDEPENDÊNCIA', 'DOS BANDEIRANTES',
  'DAS PALMEIRAS', 'BELO HORIZONTE', 'AMAZONAS', 'PARANÁ', 'CEARÁ', 'BAHIA', 'GOIÁS', 'PERNAMBUCO',
  'SANTA CATARINA', 'DAS ACÁCIAS', 'DOS IPÊS', 'DAS MANGUEIRAS', 'A', 'B', 'C', 'UM', 'DOIS', 'PROJETADA',
  'SEM DENOMINAÇÃO', 'BR 116', 'SP 055', 'DO COMÉRCIO', 'SÃO JOÃO', 'DA REPÚBLICA', 'CORONEL JOSÉ FLORÊNCIO',
];
const TIPOS_LOGRADOURO = new Tabela<string>([
  ['RUA', 62], ['AVENIDA', 20], ['TRAVESSA', 3], ['ALAMEDA', 2], ['ESTRADA', 3], ['RODOVIA', 2.5], ['PRACA', 1.5],
  ['QUADRA', 1.5], ['VIA', 0.5], ['LARGO', 0.3], ['SETOR', 0.5], ['CONJUNTO', 0.5], ['VILA', 0.3], ['BECO', 0.3],
  ['LOTEAMENTO', 0.3], ['SITIO', 0.3], ['FAZENDA', 0.4], ['', 0.5],
]);
const DOMINIOS = ['gmail.com', 'hotmail.com', 'yahoo.com.br', 'outlook.com', 'uol.com.br', 'bol.com.br', 'terra.com.br', 'ig.com.br', 'live.com'];
const NOMES_ESTRANGEIROS = ['JOHN', 'MICHAEL', 'DAVID', 'ROBERT', 'JAMES', 'HANS', 'PIERRE', 'MARCO', 'GIUSEPPE', 'WEI', 'HIROSHI', 'JUAN', 'MIGUEL', 'ANNA', 'SOPHIE'];
const SOBRENOMES_ESTRANGEIROS = ['SMITH', 'JOHNSON', 'MULLER', 'SCHMIDT', 'DUBOIS', 'ROSSI', 'BIANCHI', 'WANG', 'LI', 'TANAKA', 'SUZUKI', 'GARCIA', 'MARTINEZ', 'FERNANDEZ', 'OCONNOR'];
const CIDADES_EXTERIOR: Array<[string, string]> = [
  ['MIAMI', '249'], ['NEW YORK', '249'], ['LISBOA', '607'], ['PORTO', '607'], ['BUENOS AIRES', '063'], ['MADRID', '245'],
  ['MONTEVIDEU', '845'], ['TOQUIO', '399'], ['PARIS', '275'], ['LONDRES', '628'], ['ROMA', '386'], ['XANGAI', '160'],
];
const SITUACOES_ESPECIAIS = ['RECUPERACAO JUDICIAL', 'FALIDO', 'LIQUIDACAO EXTRAJUDICIAL', 'EM LIQUIDACAO', 'INTERVENCAO', 'LIQUIDACAO JUDICIAL', 'INICIO DE CONCORDATA'];

/** Plain (85%) or accented (15%) form of a word list entry; real names are mostly without accents. */
class ListaDeNomes {
  readonly comAcento: readonly string[];
  readonly semAcento: readonly string[];
  constructor(lista: readonly string[]) {
    this.comAcento = lista;
    this.semAcento = lista.map(semAcento);
  }
  um(s: Sorteador): string {
    const i = s.int(this.comAcento.length);
    return s.r() < 0.15 ? this.comAcento[i] : this.semAcento[i];
  }
}
const L_PRENOMES = new ListaDeNomes(PRENOMES);
const L_SOBRENOMES = new ListaDeNomes(SOBRENOMES);
const L_ATIVIDADES = new ListaDeNomes(ATIVIDADES);
const L_NEGOCIOS = new ListaDeNomes(TIPOS_NEGOCIO);
const L_FANTASIA = new ListaDeNomes(PALAVRAS_FANTASIA);
const L_LOGRADOUROS = new ListaDeNomes(LOGRADOUROS);

// ---------------------------------------------------------------------------------------------------------
// Code tables

type Categoria = 'individual' | 'limitada' | 'anonima' | 'publico' | 'associacao' | 'exterior';
type Ente = 'uniao' | 'estado' | 'municipio';
interface Natureza {
  codigo: string;
  descricao: string;
  /** % of companies */
  peso: number;
  categoria: Categoria;
  /** usual qualificacao_responsavel */
  responsavel: string;
  /** fixed main CNAE (public bodies, condomínios, churches, parties...) */
  cnae?: string;
  ente?: Ente;
}

const nat = (codigo: string, descricao: string, peso: number, categoria: Categoria, responsavel: string, extra: { cnae?: string; ente?: Ente } = {}): Natureza => ({
  codigo, descricao, peso, categoria, responsavel, ...extra,
});
const ADM_PUBLICA = '8411600';
const NATUREZAS: Natureza[] = [
  nat('1015', 'Órgão Público do Poder Executivo Federal', 0.01, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'uniao' }),
  nat('1023', 'Órgão Público do Poder Executivo Estadual ou do Distrito Federal', 0.05, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'estado' }),
  nat('1031', 'Órgão Público do Poder Executivo Municipal', 0.35, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'municipio' }),
  nat('1040', 'Órgão Público do Poder Legislativo Federal', 0.003, 'publico', '16', { cnae: ADM_PUBLICA, ente: 'uniao' }),
  nat('1058', 'Órgão Público do Poder Legislativo Estadual ou do Distrito Federal', 0.005, 'publico', '16', { cnae: ADM_PUBLICA, ente: 'estado' }),
  nat('1066', 'Órgão Público do Poder Legislativo Municipal', 0.12, 'publico', '16', { cnae: ADM_PUBLICA, ente: 'municipio' }),
  nat('1074', 'Órgão Público do Poder Judiciário Federal', 0.005, 'publico', '16', { cnae: '8423000', ente: 'uniao' }),
  nat('1082', 'Órgão Público do Poder Judiciário Estadual', 0.02, 'publico', '16', { cnae: '8423000', ente: 'estado' }),
  nat('1104', 'Autarquia Federal', 0.01, 'publico', '05', { ente: 'uniao' }),
  nat('1112', 'Autarquia Estadual ou do Distrito Federal', 0.02, 'publico', '05', { ente: 'estado' }),
  nat('1120', 'Autarquia Municipal', 0.05, 'publico', '05', { ente: 'municipio' }),
  nat('1139', 'Fundação Pública de Direito Público Federal', 0.005, 'publico', '16', { ente: 'uniao' }),
  nat('1147', 'Fundação Pública de Direito Público Estadual ou do Distrito Federal', 0.005, 'publico', '16', { ente: 'estado' }),
  nat('1155', 'Fundação Pública de Direito Público Municipal', 0.02, 'publico', '16', { ente: 'municipio' }),
  nat('1163', 'Órgão Público Autônomo Federal', 0.002, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'uniao' }),
  nat('1171', 'Órgão Público Autônomo Estadual ou do Distrito Federal', 0.002, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'estado' }),
  nat('1180', 'Órgão Público Autônomo Municipal', 0.002, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'municipio' }),
  nat('1198', 'Comissão Polinacional', 0.001, 'publico', '05'),
  nat('1210', 'Consórcio Público de Direito Público (Associação Pública)', 0.01, 'publico', '05', { ente: 'municipio' }),
  nat('1228', 'Consórcio Público de Direito Privado', 0.005, 'publico', '05'),
  nat('1236', 'Estado ou Distrito Federal', 0.001, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'estado' }),
  nat('1244', 'Município', 0.06, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'municipio' }),
  nat('1252', 'Fundação Pública de Direito Privado Federal', 0.002, 'publico', '16', { ente: 'uniao' }),
  nat('1260', 'Fundação Pública de Direito Privado Estadual ou do Distrito Federal', 0.002, 'publico', '16', { ente: 'estado' }),
  nat('1279', 'Fundação Pública de Direito Privado Municipal', 0.002, 'publico', '16', { ente: 'municipio' }),
  nat('1287', 'Fundo Público da Administração Indireta Federal', 0.005, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'uniao' }),
  nat('1295', 'Fundo Público da Administração Indireta Estadual ou do Distrito Federal', 0.01, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'estado' }),
  nat('1309', 'Fundo Público da Administração Indireta Municipal', 0.05, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'municipio' }),
  nat('1317', 'Fundo Público da Administração Direta Federal', 0.005, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'uniao' }),
  nat('1325', 'Fundo Público da Administração Direta Estadual ou do Distrito Federal', 0.02, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'estado' }),
  nat('1333', 'Fundo Público da Administração Direta Municipal', 0.3, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'municipio' }),
  nat('1341', 'União', 0.0005, 'publico', '05', { cnae: ADM_PUBLICA, ente: 'uniao' }),
  nat('2011', 'Empresa Pública', 0.02, 'anonima', '10'),
  nat('2038', 'Sociedade de Economia Mista', 0.02, 'anonima', '10'),
  nat('2046', 'Sociedade Anônima Aberta', 0.03, 'anonima', '10'),
  nat('2054', 'Sociedade Anônima Fechada', 0.8, 'anonima', '10'),
  nat('2062', 'Sociedade Empresária Limitada', 44, 'limitada', '49'),
  nat('2070', 'Sociedade Empresária em Nome Coletivo', 0.01, 'limitada', '49'),
  nat('2089', 'Sociedade Empresária em Comandita Simples', 0.005, 'limitada', '49'),
  nat('2097', 'Sociedade Empresária em Comandita por Ações', 0.002, 'anonima', '10'),
  nat('2127', 'Sociedade em Conta de Participação', 0.05, 'limitada', '49'),
  nat('2135', 'Empresário (Individual)', 36, 'individual', '50'),
  nat('2143', 'Cooperativa', 0.3, 'associacao', '16'),
  nat('2151', 'Consórcio de Sociedades', 0.05, 'limitada', '05'),
  nat('2160', 'Grupo de Sociedades', 0.001, 'limitada', '05'),
  nat('2178', 'Estabelecimento, no Brasil, de Sociedade Estrangeira', 0.01, 'exterior', '17'),
  nat('2194', 'Estabelecimento, no Brasil, de Empresa Binacional Argentino-Brasileira', 0.0005, 'exterior', '17'),
  nat('2216', 'Empresa Domiciliada no Exterior', 0.03, 'exterior', '17'),
  nat('2224', 'Clube/Fundo de Investimento', 0.05, 'anonima', '05'),
  nat('2232', 'Sociedade Simples Pura', 0.3, 'limitada', '49'),
  nat('2240', 'Sociedade Simples Limitada', 1.5, 'limitada', '49'),
  nat('2259', 'Sociedade Simples em Nome Coletivo', 0.005, 'limitada', '49'),
  nat('2267', 'Sociedade Simples em Comandita Simples', 0.002, 'limitada', '49'),
  nat('2275', 'Empresa Binacional', 0.0005, 'anonima', '10'),
  nat('2283', 'Consórcio de Empregadores', 0.005, 'limitada', '05'),
  nat('2291', 'Consórcio Simples', 0.005, 'limitada', '05'),
  nat('2305', 'Empresa Individual de Responsabilidade Limitada (de Natureza Empresária)', 2.5, 'limitada', '65'),
  nat('2313', 'Empresa Individual de Responsabilidade Limitada (de Natureza Simples)', 0.4, 'limitada', '65'),
  nat('2321', 'Sociedade Unipessoal de Advocacia', 0.3, 'limitada', '65', { cnae: '6911701' }),
  nat('2330', 'Cooperativas de Consumo', 0.002, 'associacao', '16'),
  nat('2348', 'Empresa Simples de Inovação - Inova Simples', 0.01, 'limitada', '49'),
  nat('3034', 'Serviço Notarial e Registral (Cartório)', 0.05, 'associacao', '32', { cnae: '6912500' }),
  nat('3069', 'Fundação Privada', 0.15, 'associacao', '16'),
  nat('3077', 'Serviço Social Autônomo', 0.01, 'associacao', '16'),
  nat('3085', 'Condomínio Edilício', 1.5, 'associacao', '19', { cnae: '8112500' }),
  nat('3107', 'Comissão de Conciliação Prévia', 0.001, 'associacao', '16'),
  nat('3115', 'Entidade de Mediação e Arbitragem', 0.005, 'associacao', '16'),
  nat('3131', 'Entidade Sindical', 0.2, 'associacao', '16', { cnae: '9420100' }),
  nat('3204', 'Estabelecimento, no Brasil, de Fundação ou Associação Estrangeiras', 0.002, 'associacao', '17'),
  nat('3212', 'Fundação ou Associação Domiciliada no Exterior', 0.001, 'exterior', '17'),
  nat('3220', 'Organização Religiosa', 1.2, 'associacao', '16', { cnae: '9491000' }),
  nat('3239', 'Comunidade Indígena', 0.001, 'associacao', '16'),
  nat('3247', 'Fundo Privado', 0.005, 'associacao', '05'),
  nat('3255', 'Órgão de Direção Nacional de Partido Político', 0.002, 'associacao', '16', { cnae: '9492800' }),
  nat('3263', 'Órgão de Direção Regional de Partido Político', 0.02, 'associacao', '16', { cnae: '9492800' }),
  nat('3271', 'Órgão de Direção Local de Partido Político', 0.7, 'associacao', '16', { cnae: '9492800' }),
  nat('3280', 'Comitê Financeiro de Partido Político', 0.3, 'associacao', '16', { cnae: '9492800' }),
  nat('3298', 'Frente Plebiscitária ou Referendária', 0.001, 'associacao', '16'),
  nat('3306', 'Organização Social (OS)', 0.01, 'associacao', '16'),
  nat('3310', 'Demais Condomínios', 0.05, 'associacao', '19', { cnae: '8112500' }),
  nat('3999', 'Associação Privada', 4.5, 'associacao', '16'),
  nat('4014', 'Empresa Individual Imobiliária', 0.01, 'individual', '34'),
  nat('4022', 'Segurado Especial', 0.005, 'individual', '50'),
  nat('4081', 'Contribuinte individual', 0.05, 'individual', '50'),
  nat('4090', 'Candidato a Cargo Político Eletivo', 0.8, 'individual', '51', { cnae: '9492800' }),
  nat('4111', 'Leiloeiro', 0.005, 'individual', '50'),
  nat('4120', 'Produtor Rural (Pessoa Física)', 0.3, 'individual', '59', { cnae: '0151201' }),
  nat('5010', 'Organização Internacional', 0.001, 'exterior', '41'),
  nat('5029', 'Representação Diplomática Estrangeira', 0.002, 'exterior', '39'),
  nat('5037', 'Outras Instituições Extraterritoriais', 0.001, 'exterior', '62'),
  nat('8885', 'Natureza Jurídica não informada', 0.0005, 'limitada', '00'),
];

const QUALIFICACOES: Array<[string, string]> = [
  ['00', 'Não informada'], ['01', 'Acionista'], ['02', 'Acionista Controlador'], ['03', 'Acionista Diretor'],
  ['04', 'Acionista Presidente'], ['05', 'Administrador'], ['06', 'Administradora de consórcio de Empresas ou Grupo de Empresas'],
  ['07', 'Comissário'], ['08', 'Conselheiro de Administração'], ['09', 'Curador'], ['10', 'Diretor'], ['11', 'Interventor'],
  ['12', 'Inventariante'], ['13', 'Liquidante'], ['14', 'Mãe'], ['15', 'Pai'], ['16', 'Presidente'], ['17', 'Procurador'],
  ['18', 'Secretário'], ['19', 'Síndico (Condomínio)'], ['20', 'Sociedade Consorciada'], ['21', 'Sociedade Filiada'],
  ['22', 'Sócio'], ['23', 'Sócio Capitalista'], ['24', 'Sócio Comanditado'], ['25', 'Sócio Comanditário'],
  ['26', 'Sócio de Indústria'], ['27', 'Sócio Residente ou Domiciliado no Exterior'], ['28', 'Sócio-Gerente'],
  ['29', 'Sócio Incapaz ou Relat.Incapaz (exceto menor)'], ['30', 'Sócio Menor (Assistido/Representado)'],
  ['31', 'Sócio Ostensivo'], ['32', 'Tabelião'], ['33', 'Tesoureiro'], ['34', 'Titular de Empresa Individual Imobiliária'],
  ['35', 'Tutor'], ['36', 'Gerente-Delegado'], ['37', 'Sócio Pessoa Jurídica Domiciliado no Exterior'],
  ['38', 'Sócio Pessoa Física Residente no Exterior'], ['39', 'Diplomata'], ['40', 'Cônsul'],
  ['41', 'Representante de Organização Internacional'], ['42', 'Oficial de Registro'], ['43', 'Responsável'],
  ['44', 'Sócio Participante'], ['45', 'Sócio Investidor'], ['46', 'Ministro de Estado das Relações Exteriores'],
  ['47', 'Sócio Pessoa Física Residente no Brasil'], ['48', 'Sócio Pessoa Jurídica Domiciliado no Brasil'],
  ['49', 'Sócio-Administrador'], ['50', 'Empresário'], ['51', 'Candidato a cargo Político Eletivo'],
  ['52', 'Sócio com Capital'], ['53', 'Sócio sem Capital'], ['54', 'Fundador'],
  ['55', 'Sócio Comanditado Residente no Exterior'], ['56', 'Sócio Comanditário Pessoa Física Residente no Exterior'],
  ['57', 'Sócio Comanditário Pessoa Jurídica Domiciliado no Exterior'], ['58', 'Sócio Comanditário Incapaz'],
  ['59', 'Produtor Rural'], ['60', 'Cônsul Honorário'], ['61', 'Responsável indígena'],
  ['62', 'Representante da Instituição Extraterritorial'], ['63', 'Cotas em Tesouraria'], ['64', 'Administrador Judicial'],
  ['65', 'Titular Pessoa Física Residente ou Domiciliado no Brasil'],
  ['66', 'Titular Pessoa Física Residente ou Domiciliado no Exterior'],
  ['67', 'Titular Pessoa Física Incapaz ou Relativamente Incapaz (exceto menor)'],
  ['68', 'Titular Pessoa Física Menor (Assistido/Representado)'], ['69', 'Beneficiário Final'],
  ['70', 'Administrador Residente ou Domiciliado no Exterior'],
  ['71', 'Conselheiro de Administração Residente ou Domiciliado no Exterior'],
  ['72', 'Diretor Residente ou Domiciliado no Exterior'], ['73', 'Presidente Residente ou Domiciliado no Exterior'],
  ['74', 'Sócio-Administrador Residente ou Domiciliado no Exterior'], ['75', 'Fundador Residente ou Domiciliado no Exterior'],
  ['78', 'Titular Pessoa Jurídica Domiciliada no Brasil'], ['79', 'Titular Pessoa Jurídica Domiciliada no Exterior'],
];

const MOTIVOS: Array<[string, string]> = [
  ['00', 'SEM MOTIVO'], ['01', 'EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA'], ['02', 'INCORPORACAO'], ['03', 'FUSAO'],
  ['04', 'CISAO TOTAL'], ['05', 'ENCERRAMENTO DA FALENCIA'], ['06', 'ENCERRAMENTO DA LIQUIDACAO'], ['07', 'ELEVACAO A MATRIZ'],
  ['08', 'TRANSPASSE'], ['09', 'NAO INICIO DE ATIVIDADE'], ['10', 'EXTINCAO PELO ENCERRAMENTO DA LIQUIDACAO JUDICIAL'],
  ['11', 'ANULACAO POR MULTICIPLIDADE'], ['12', 'ANULACAO ONLINE DE OFICIO'], ['13', 'OMISSA CONTUMAZ'],
  ['14', 'OMISSA NAO LOCALIZADA'], ['15', 'INEXISTENTE DE FATO'], ['16', 'ANULACAO POR VICIOS'],
  ['17', 'BAIXA INICIADA EM ANALISE'], ['18', 'INTERRUPCAO TEMPORARIA DAS ATIVIDADES'], ['21', 'PEDIDO DE BAIXA INDEFERIDA'],
  ['24', 'POR EMISSAO CERTIDAO NEGATIVA'], ['28', 'TRANSFERENCIA FILIAL CONDOMINIO'], ['31', 'EXTINCAO-UNIFICACAO DA FILIAL'],
  ['33', 'TRANSFERENCIA DO ORGAO LOCAL A CONDICAO DE FILIAL DO ORGAO REGIONAL'], ['34', 'ANULACAO DE INSCRICAO INDEVIDA'],
  ['35', 'EMPRESA DOMICILIADA NO EXTERIOR'], ['36', 'PRATICA IRREGULAR DE OPERACAO DE COMERCIO EXTERIOR'],
  ['37', 'BAIXA DE PRODUTOR RURAL'], ['38', 'BAIXA DEFERIDA PELA RFB AGUARDANDO ANALISE DO CONVENENTE'],
  ['39', 'BAIXA DEFERIDA PELA RFB E INDEFERIDA PELO CONVENENTE'], ['40', 'BAIXA INDEFERIDA PELA RFB E AGUARDANDO ANALISE DO CONVENENTE'],
  ['41', 'BAIXA INDEFERIDA PELA RFB E DEFERIDA PELO CONVENENTE'], ['42', 'BAIXA DEFERIDA PELA RFB E SEFIN, AGUARDANDO ANALISE SEFAZ'],
  ['43', 'BAIXA DEFERIDA PELA RFB, AGUARDANDO ANALISE DA SEFAZ E INDEFERIDA PELA SEFIN'],
  ['44', 'BAIXA DEFERIDA PELA RFB E SEFAZ, AGUARDANDO ANALISE SEFIN'], ['45', 'BAIXA DEFERIDA PELA RFB, AGUARDANDO ANALISE DA SEFIN E INDEFERIDA PELA SEFAZ'],
  ['46', 'BAIXA DEFERIDA PELA RFB E SEFAZ E INDEFERIDA PELA SEFIN'], ['47', 'BAIXA DEFERIDA PELA RFB E SEFIN E INDEFERIDA PELA SEFAZ'],
  ['48', 'BAIXA INDEFERIDA PELA RFB, AGUARDANDO ANALISE SEFAZ E DEFERIDA PELA SEFIN'],
  ['49', 'BAIXA INDEFERIDA PELA RFB, AGUARDANDO ANALISE DA SEFAZ E INDEFERIDA PELA SEFIN'],
  ['50', 'BAIXA INDEFERIDA PELA RFB, DEFERIDA PELA SEFAZ E AGUARDANDO ANALISE DA SEFIN'],
  ['51', 'BAIXA INDEFERIDA PELA RFB E SEFAZ, AGUARDANDO ANALISE DA SEFIN'], ['52', 'BAIXA INDEFERIDA PELA RFB, DEFERIDA PELA SEFIN E AGUARDANDO ANALISE DA SEFAZ'],
  ['53', 'BAIXA INDEFERIDA PELA RFB E SEFIN, AGUARDANDO ANALISE DA SEFAZ'],
  ['54', 'BAIXA - TRATAMENTO DIFERENCIADO DADO AS ME E EPP (LEI COMPLEMENTAR NUMERO 123/2006)'],
  ['55', 'DEFERIDO O ENCERRAMENTO PELA RFB, AGUARDANDO ANALISE DO CONVENENTE'], ['60', 'ARTIGO 30, VI, DA IN 748/2007'],
  ['61', 'INDICIO INTERPOS. FRAUDULENTA'], ['62', 'FALTA DE PLURALIDADE DE SOCIOS'], ['63', 'OMISSAO DE DECLARACOES'],
  ['64', 'LOCALIZACAO DESCONHECIDA'], ['66', 'INAPTIDAO'], ['67', 'REGISTRO CANCELADO'],
  ['70', 'ANULACAO POR NAO CONFIRMADO ATO DE REGISTRO DO MEI NA JUNTA COMERCIAL'], ['71', 'INAPTIDAO (LEI 11.941/2009 ART.54)'],
  ['72', 'DETERMINACAO JUDICIAL'], ['73', 'OMISSAO CONTUMAZ'], ['74', 'INCONSISTENCIA CADASTRAL'],
  ['75', 'OBITO DO MEI - TITULAR FALECIDO'], ['80', 'BAIXA REGISTRADA NA JUNTA, INDEFERIDA NA RFB'],
  ['82', 'SUSPENSO PERANTE A COMISSAO DE VALORES MOBILIARIOS - CVM'], ['93', 'CNPJ - TITULAR BAIXADO'],
];

// Situação cadastral: 01 NULA, 02 ATIVA, 03 SUSPENSA, 04 INAPTA, 08 BAIXADA, and the usual motivos of each.
const SITUACOES = new Tabela<string>([['02', 45], ['08', 40], ['04', 12], ['03', 1.5], ['01', 1.5]]);
const MOTIVOS_POR_SITUACAO: Record<string, Tabela<string>> = {
  '01': new Tabela([['11', 30], ['16', 20], ['34', 20], ['70', 20], ['12', 10]]),
  '02': new Tabela([['00', 1]]),
  '03': new Tabela([['18', 40], ['73', 30], ['82', 10], ['72', 20]]),
  '04': new Tabela([['63', 75], ['66', 10], ['74', 8], ['64', 7]]),
  '08': new Tabela([['01', 65], ['71', 14], ['80', 4], ['54', 4], ['02', 3], ['31', 3], ['55', 2], ['75', 2], ['03', 1], ['09', 2]]),
};

// The most frequent CNAE subclasses (real codes), most popular first; the long tail is generated.
const CNAES_REAIS: Array<[string, string]> = [
  ['4781400', 'Comércio varejista de artigos do vestuário e acessórios'],
  ['9602501', 'Cabeleireiros, manicure e pedicure'],
  ['5611203', 'Lanchonetes, casas de chá, de sucos e similares'],
  ['4712100', 'Comércio varejista de mercadorias em geral, com predominância de produtos alimentícios - minimercados, mercearias e armazéns'],
  ['9430800', 'Atividades de associações de defesa de direitos sociais'],
  ['5611201', 'Restaurantes e similares'],
  ['8211300', 'Serviços combinados de escritório e apoio administrativo'],
  ['4399103', 'Obras de alvenaria'],
  ['7319002', 'Promoção de vendas'],
  ['4930202', 'Transporte rodoviário de carga, exceto produtos perigosos e mudanças, intermunicipal, interestadual e internacional'],
  ['5620104', 'Fornecimento de alimentos preparados preponderantemente para consumo domiciliar'],
  ['4721102', 'Padaria e confeitaria com predominância de revenda'],
  ['4520001', 'Serviços de manutenção e reparação mecânica de veículos automotores'],
  ['8219999', 'Preparação de documentos e serviços especializados de apoio administrativo não especificados anteriormente'],
  ['4744099', 'Comércio varejista de materiais de construção em geral'],
  ['9602502', 'Atividades de estética e outros serviços de cuidados com a beleza'],
  ['4723700', 'Comércio varejista de bebidas'],
  ['7490104', 'Atividades de intermediação e agenciamento de serviços e negócios em geral, exceto imobiliários'],
  ['4772500', 'Comércio varejista de cosméticos, produtos de perfumaria e de higiene pessoal'],
  ['8599699', 'Outras atividades de ensino não especificadas anteriormente'],
  ['4120400', 'Construção de edifícios'],
  ['6201501', 'Desenvolvimento de programas de computador sob encomenda'],
  ['7020400', 'Atividades de consultoria em gestão empresarial, exceto consultoria técnica específica'],
  ['6911701', 'Serviços advocatícios'],
  ['6920601', 'Atividades de contabilidade'],
  ['8630503', 'Atividade médica ambulatorial restrita a consultas'],
  ['8630504', 'Atividade odontológica'],
  ['4753900', 'Comércio varejista especializado de eletrodomésticos e equipamentos de áudio e vídeo'],
  ['4789099', 'Comércio varejista de outros produtos não especificados anteriormente'],
  ['4711302', 'Comércio varejista de mercadorias em geral, com predominância de produtos alimentícios - supermercados'],
  ['4731800', 'Comércio varejista de combustíveis para veículos automotores'],
  ['4771701', 'Comércio varejista de produtos farmacêuticos, sem manipulação de fórmulas'],
  ['5320202', 'Serviços de entrega rápida'],
  ['4321500', 'Instalação e manutenção elétrica'],
  ['4330404', 'Serviços de pintura de edifícios em geral'],
  ['9511800', 'Reparação e manutenção de computadores e de equipamentos periféricos'],
  ['1412601', 'Confecção de peças do vestuário, exceto roupas íntimas e as confeccionadas sob medida'],
  ['8121400', 'Limpeza em prédios e em domicílios'],
  ['4930201', 'Transporte rodoviário de carga, exceto produtos perigosos e mudanças, municipal'],
  ['4923002', 'Serviço de transporte de passageiros - locação de automóveis com motorista'],
  ['7711000', 'Locação de automóveis sem condutor'],
  ['6822600', 'Gestão e administração da propriedade imobiliária'],
  ['6810202', 'Aluguel de imóveis próprios'],
  ['6463800', 'Outras sociedades de participação, exceto holdings'],
  ['6462000', 'Holdings de instituições não-financeiras'],
  ['8550302', 'Atividades de apoio à educação, exceto caixas escolares'],
  ['9313100', 'Atividades de condicionamento físico'],
  ['4782201', 'Comércio varejista de calçados'],
  ['4755502', 'Comércio varejista de artigos de armarinho'],
  ['4774100', 'Comércio varejista de artigos de óptica'],
  ['4759899', 'Comércio varejista de outros artigos de uso pessoal e doméstico não especificados anteriormente'],
  ['4761003', 'Comércio varejista de artigos de papelaria'],
  ['4789001', 'Comércio varejista de suvenires, bijuterias e artesanatos'],
  ['4541206', 'Comércio a varejo de peças e acessórios novos para motocicletas e motonetas'],
  ['4530703', 'Comércio a varejo de peças e acessórios novos para veículos automotores'],
  ['1091102', 'Fabricação de produtos de padaria e confeitaria com predominância de produção própria'],
  ['5250804', 'Organização logística do transporte de carga'],
  ['7112000', 'Serviços de engenharia'],
  ['7410202', 'Design de interiores'],
  ['7420001', 'Atividades de produção de fotografias, exceto aérea e submarina'],
  ['8230001', 'Serviços de organização de feiras, congressos, exposições e festas'],
  ['9329899', 'Outras atividades de recreação e lazer não especificadas anteriormente'],
  ['9700500', 'Serviços domésticos'],
  ['0151201', 'Criação de bovinos para corte'],
  ['0115600', 'Cultivo de soja'],
  ['8411600', 'Administração pública em geral'],
  ['8423000', 'Justiça'],
  ['8112500', 'Condomínios prediais'],
  ['9491000', 'Atividades de organizações religiosas ou filosóficas'],
  ['9492800', 'Atividades de organizações políticas'],
  ['9420100', 'Atividades de organizações sindicais'],
  ['6912500', 'Cartórios'],
];

// Pieces for the generated long tail of CNAEs: per CNAE section, the divisions, the phrase and its objects.
const SECOES_CNAE: Array<{ divisoes: number[]; frases: string[]; objetos: string[] }> = [
  {
    divisoes: [1, 2, 3],
    frases: ['Cultivo de', 'Criação de', 'Produção de sementes certificadas de', 'Atividades de apoio à produção de'],
    objetos: ['arroz', 'milho', 'feijão', 'café', 'cana-de-açúcar', 'algodão herbáceo', 'mandioca', 'laranja', 'uva', 'banana', 'flores e plantas ornamentais', 'hortaliças', 'trigo', 'fumo', 'cacau', 'eucalipto', 'suínos', 'frangos para corte', 'ovinos e caprinos', 'peixes em água doce', 'camarões', 'abelhas', 'equinos', 'búfalos', 'maçã', 'açaí'],
  },
  {
    divisoes: [5, 6, 7, 8, 9],
    frases: ['Extração de', 'Beneficiamento de', 'Apoio à extração de'],
    objetos: ['minério de ferro', 'minério de alumínio', 'pedra, areia e cascalho', 'granito e beneficiamento associado', 'argila', 'sal marinho', 'petróleo e gás natural', 'carvão mineral', 'gemas (pedras preciosas e semipreciosas)', 'calcário e dolomita', 'quartzo', 'caulim'],
  },
  {
    divisoes: [10, 11, 13, 14, 15, 16, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33],
    frases: ['Fabricação de', 'Fabricação de', 'Manutenção e reparação de', 'Beneficiamento de', 'Preparação de'],
    objetos: ['conservas de frutas', 'laticínios', 'sorvetes e outros gelados comestíveis', 'massas alimentícias', 'biscoitos e bolachas', 'chocolates e confeitos', 'cervejas e chopes', 'refrigerantes', 'tecidos de malha', 'calçados de couro', 'artefatos de couro', 'móveis com predominância de madeira', 'embalagens de papel', 'produtos químicos orgânicos', 'medicamentos para uso humano', 'cosméticos e produtos de perfumaria', 'artefatos de borracha', 'embalagens de material plástico', 'vidro plano e de segurança', 'artefatos de cerâmica', 'estruturas metálicas', 'ferramentas', 'eletrodomésticos', 'aparelhos telefônicos', 'máquinas agrícolas', 'peças e acessórios para veículos automotores', 'bicicletas e triciclos não motorizados', 'instrumentos musicais', 'brinquedos e jogos recreativos', 'artigos de joalheria e ourivesaria', 'colchões', 'sabões e detergentes sintéticos', 'tintas, vernizes, esmaltes e lacas', 'açúcar em bruto', 'café torrado e moído', 'rações para animais', 'aguardente de cana-de-açúcar', 'artigos de cutelaria'],
  },
  {
    divisoes: [35, 36, 37, 38, 39],
    frases: ['Coleta de', 'Tratamento e disposição de', 'Recuperação de', 'Distribuição de'],
    objetos: ['resíduos não-perigosos', 'resíduos perigosos', 'materiais metálicos', 'materiais plásticos', 'água', 'energia elétrica', 'gás canalizado', 'esgoto'],
  },
  {
    divisoes: [41, 42, 43],
    frases: ['Construção de', 'Obras de', 'Instalação de', 'Serviços de', 'Montagem de'],
    objetos: ['rodovias e ferrovias', 'redes de abastecimento de água', 'estações e redes de telecomunicações', 'fundações', 'terraplenagem', 'impermeabilização em obras de engenharia civil', 'portas, janelas, tetos, divisórias e armários embutidos', 'sistemas de prevenção contra incêndio', 'estruturas metálicas', 'instalações hidráulicas, sanitárias e de gás', 'obras de acabamento', 'sistemas de ventilação e refrigeração', 'pisos e revestimentos'],
  },
  {
    divisoes: [45, 46, 47],
    frases: ['Comércio varejista de', 'Comércio atacadista de', 'Representantes comerciais e agentes do comércio de', 'Comércio varejista especializado de'],
    objetos: ['artigos de óptica', 'produtos farmacêuticos', 'materiais de construção', 'ferragens e ferramentas', 'artigos esportivos', 'produtos de limpeza', 'hortifrutigranjeiros', 'carnes e pescados', 'bebidas', 'equipamentos de informática', 'livros, jornais e revistas', 'animais vivos', 'artigos de caça, pesca e camping', 'gás liquefeito de petróleo (GLP)', 'tecidos', 'calçados', 'produtos alimentícios em geral', 'artigos de cama, mesa e banho', 'plantas e flores naturais', 'móveis', 'peças e acessórios para motocicletas', 'máquinas e equipamentos para uso industrial', 'cereais e leguminosas beneficiados', 'artigos do vestuário', 'jóias e relógios', 'produtos veterinários', 'tintas e materiais para pintura', 'embalagens', 'produtos do fumo', 'laticínios e frios'],
  },
  {
    divisoes: [49, 50, 51, 52, 53],
    frases: ['Transporte rodoviário de', 'Transporte aquaviário de', 'Transporte aéreo de', 'Armazenamento de', 'Serviços de'],
    objetos: ['passageiros, sob regime de fretamento', 'produtos perigosos', 'mudanças', 'carga geral', 'táxi', 'cargas frigorificadas', 'grãos', 'malote', 'reboque de veículos', 'estacionamento de veículos', 'escolares'],
  },
  {
    divisoes: [55, 56, 58, 59, 60, 61, 62, 63],
    frases: ['Serviços de', 'Atividades de', 'Edição de', 'Produção de', 'Desenvolvimento e licenciamento de'],
    objetos: ['alojamento em pensões', 'hotéis', 'bufê', 'cantinas', 'livros', 'jornais', 'filmes para publicidade', 'rádio', 'televisão aberta', 'provedores de acesso às redes de comunicações', 'programas de computador customizáveis', 'tratamento de dados', 'portais, provedores de conteúdo e outros serviços de informação na internet', 'agências de notícias', 'gravação de som e de edição de música'],
  },
  {
    divisoes: [64, 65, 66, 68],
    frases: ['Atividades de', 'Serviços de', 'Corretagem de', 'Administração de'],
    objetos: ['bancos múltiplos', 'cooperativas de crédito', 'sociedades de crédito ao microempreendedor', 'seguros de vida', 'planos de saúde', 'câmbio', 'cartões de crédito', 'fundos de investimento', 'imóveis de terceiros', 'consórcios', 'correspondentes de instituições financeiras'],
  },
  {
    divisoes: [69, 70, 71, 72, 73, 74, 75, 77, 78, 79, 80, 81, 82],
    frases: ['Serviços de', 'Atividades de', 'Locação de', 'Aluguel de', 'Consultoria em'],
    objetos: ['auditoria', 'perícia técnica', 'pesquisa de mercado', 'tradução, interpretação e similares', 'arquitetura', 'topografia', 'testes e análises técnicas', 'publicidade', 'design', 'medicina veterinária', 'máquinas e equipamentos agrícolas', 'palcos, coberturas e outras estruturas de uso temporário', 'seleção e agenciamento de mão-de-obra', 'agências de viagens', 'vigilância e segurança privada', 'jardinagem', 'imunização e controle de pragas urbanas', 'cobranças e informações cadastrais', 'envasamento e empacotamento', 'fotocópias', 'equipamentos recreativos e esportivos', 'objetos do vestuário, jóias e acessórios'],
  },
  {
    divisoes: [84, 85, 86, 87, 88],
    frases: ['Ensino de', 'Atividades de', 'Serviços de', 'Atendimento em'],
    objetos: ['educação infantil - creche', 'ensino fundamental', 'ensino médio', 'educação superior - graduação', 'idiomas', 'esportes', 'arte e cultura', 'informática', 'fisioterapia', 'psicologia e psicanálise', 'fonoaudiologia', 'nutrição', 'enfermagem', 'pronto-socorro e unidades hospitalares para atendimento a urgências', 'laboratórios clínicos', 'assistência a idosos', 'assistência psicossocial', 'terapia ocupacional'],
  },
  {
    divisoes: [90, 91, 92, 93, 94, 95, 96, 97, 99],
    frases: ['Atividades de', 'Serviços de', 'Reparação e manutenção de', 'Exploração de'],
    objetos: ['artes cênicas e espetáculos', 'bibliotecas e arquivos', 'museus', 'jogos eletrônicos', 'clubes sociais, esportivos e similares', 'parques de diversão e parques temáticos', 'equipamentos de comunicação', 'eletrodomésticos', 'calçados, bolsas e artigos de viagem', 'bicicletas, triciclos e outros veículos não-motorizados', 'lavanderias', 'tinturarias e toalheiros', 'serviços funerários', 'alojamento de animais domésticos', 'higiene e embelezamento de animais domésticos', 'organizações associativas profissionais', 'tatuagem e colocação de piercing', 'astrologia e numerologia'],
  },
];
const COMPLEMENTOS_CNAE = ['', '', '', ' e similares', ' não especificados anteriormente', ' em geral', ' sob encomenda', ', exceto para uso industrial', ' - em estabelecimento próprio', ' associada à revenda'];

interface Cnae {
  codigo: string;
  descricao: string;
}

/** ~1,300 CNAE subclasses, most popular first: the real top codes, then a generated long tail. */
function gerarCnaes(s: Sorteador, quantos = 1300): Cnae[] {
  const cnaes: Cnae[] = CNAES_REAIS.map(([codigo, descricao]) => ({ codigo, descricao }));
  const codigos = new Set(cnaes.map((c) => c.codigo));
  const descricoes = new Set(cnaes.map((c) => c.descricao));
  for (let tentativas = 0; cnaes.length < quantos && tentativas < quantos * 50; tentativas++) {
    const secao = s.um(SECOES_CNAE);
    const codigo = pad(s.um(secao.divisoes), 2) + pad(s.int(100_000), 5);
    const descricao = `${s.um(secao.frases)} ${s.um(secao.objetos)}${s.um(COMPLEMENTOS_CNAE)}`;
    if (codigos.has(codigo) || descricoes.has(descricao)) continue;
    codigos.add(codigo);
    descricoes.add(descricao);
    cnaes.push({ codigo, descricao });
  }
  return cnaes;
}

interface Municipio {
  codigo: string;
  nome: string;
  uf: Uf;
}

const SILABAS = ['I', 'TA', 'PI', 'RA', 'CA', 'MA', 'RU', 'JA', 'BU', 'GUA', 'PE', 'RI', 'TI', 'BA', 'CU', 'MI', 'TU', 'PO', 'NA', 'RE', 'BO', 'TE', 'JU', 'A', 'U', 'LU', 'QUI', 'ITA', 'PA', 'SA', 'CO', 'XA', 'XI', 'GO', 'MO', 'RO', 'NHA', 'GI', 'CE', 'LAN', 'DIA', 'TIN'];
const PREFIXOS_MUNICIPIO = ['SAO', 'SANTA', 'SANTO', 'NOVA', 'NOVO', 'BOM JESUS DO', 'PORTO', 'CAMPO', 'SERRA', 'RIO', 'ALTO', 'BARRA DO', 'LAGOA', 'MORRO', 'VILA', 'PEDRA', 'CONCEICAO DO', 'SAO JOAO DO', 'SAO JOSE DO', 'SANTA RITA DO', 'SANTO ANTONIO DO', 'JARDIM', 'PALMEIRA DOS', 'CACHOEIRA DO', 'BELA VISTA DO', 'CAMPOS DO', "OLHO D'AGUA DO"];
const SUFIXOS_MUNICIPIO = ['DO SUL', 'DO NORTE', 'DO OESTE', 'PAULISTA', 'DE MINAS', 'DA SERRA', 'DO LESTE', "D'OESTE", 'DOS CAMPOS', 'DAS FLORES', 'GRANDE', 'VELHO', 'NOVO', 'DO MATO', 'DA MATA'];

function palavraInventada(s: Sorteador): string {
  let p = '';
  for (let n = s.entre(2, 4); n > 0; n--) p += s.um(SILABAS);
  return p;
}

/**
 * The Receita's 4-digit município codes (TOM), in blocks per UF in the Receita's order, with the real number
 * of municípios per UF; names upper case without accents, as in the real table.
 */
function gerarMunicipios(s: Sorteador): Municipio[] {
  const municipios: Municipio[] = [];
  let codigo = 1;
  for (const uf of UFS) {
    const nomes = new Set<string>(uf.cidades);
    while (nomes.size < uf.municipios) {
      const u = s.r();
      const base = palavraInventada(s);
      nomes.add(
        u < 0.4 ? base
        : u < 0.65 ? `${s.um(PREFIXOS_MUNICIPIO)} ${base}`
        : u < 0.85 ? `${base} ${s.um(SUFIXOS_MUNICIPIO)}`
        : `${s.um(PREFIXOS_MUNICIPIO)} ${base} ${s.um(SUFIXOS_MUNICIPIO)}`,
      );
    }
    for (const nome of nomes) {
      if (codigo === Number(MUNICIPIO_EXTERIOR)) codigo++;
      municipios.push({ codigo: pad(codigo, 4), nome, uf });
      codigo += 1 + (s.chance(0.6) ? 1 : 0) + (s.chance(0.05) ? 1 : 0); // the real codes have gaps
    }
  }
  if (codigo > 9999) throw new Error('município codes overflowed 4 digits');
  return municipios;
}

// Country names (BACEN table, as used by the Receita); a few pinned to their real codes, the rest interpolated.
const PAISES_FIXOS: Record<string, number> = {
  AFEGANISTAO: 13, ALBANIA: 17, ALEMANHA: 23, ANDORRA: 37, ANGOLA: 40, ARGENTINA: 63, AUSTRALIA: 69, AUSTRIA: 72,
  BOLIVIA: 97, BRASIL: 105, CANADA: 149, CHILE: 158, CHINA: 160, COLOMBIA: 169, 'COREIA DO SUL': 190,
  'COSTA RICA': 196, CUBA: 199, DINAMARCA: 232, EQUADOR: 239, ESPANHA: 245, 'ESTADOS UNIDOS': 249, FRANCA: 275,
  GRECIA: 301, INDIA: 361, ITALIA: 386, JAPAO: 399, MEXICO: 493, 'PAISES BAIXOS (HOLANDA)': 573, PANAMA: 580,
  PARAGUAI: 586, PERU: 589, POLONIA: 603, PORTUGAL: 607, 'REINO UNIDO': 628, RUSSIA: 676, SUECIA: 764, SUICA: 767,
  URUGUAI: 845, VENEZUELA: 850,
};
const PAISES = (
  'AFEGANISTAO|AFRICA DO SUL|ALAND, ILHAS|ALBANIA|ALEMANHA|ANDORRA|ANGOLA|ANGUILLA|ANTARTICA|ANTIGUA E BARBUDA|' +
  'ARABIA SAUDITA|ARGELIA|ARGENTINA|ARMENIA|ARUBA|AUSTRALIA|AUSTRIA|AZERBAIJAO|BAHAMAS|BAHREIN|BANGLADESH|' +
  'BARBADOS|BELARUS|BELGICA|BELIZE|BENIN|BERMUDAS|BOLIVIA|BONAIRE|BOSNIA-HERZEGOVINA|BOTSUANA|BRASIL|BRUNEI|' +
  'BULGARIA|BURKINA FASO|BURUNDI|BUTAO|CABO VERDE|CAMAROES|CAMBOJA|CANADA|CATAR|CAYMAN, ILHAS|CAZAQUISTAO|CHADE|' +
  'CHILE|CHINA|CHIPRE|CINGAPURA|COCOS (KEELING), ILHAS|COLOMBIA|COMORES|CONGO|COOK, ILHAS|COREIA DO NORTE|' +
  'COREIA DO SUL|COSTA DO MARFIM|COSTA RICA|CROACIA|CUBA|CURACAO|DINAMARCA|DJIBUTI|DOMINICA|EGITO|EL SALVADOR|' +
  'EMIRADOS ARABES UNIDOS|EQUADOR|ERITREIA|ESLOVAQUIA|ESLOVENIA|ESPANHA|ESTADOS UNIDOS|ESTONIA|ETIOPIA|' +
  'FALKLAND (ILHAS MALVINAS)|FEROE, ILHAS|FIJI|FILIPINAS|FINLANDIA|FRANCA|GABAO|GAMBIA|GANA|GEORGIA|GIBRALTAR|' +
  'GRANADA|GRECIA|GROENLANDIA|GUADALUPE|GUAM|GUATEMALA|GUERNSEY|GUIANA|GUIANA FRANCESA|GUINE|GUINE-BISSAU|' +
  'GUINE-EQUATORIAL|HAITI|HONDURAS|HONG KONG|HUNGRIA|IEMEN|INDIA|INDONESIA|IRA|IRAQUE|IRLANDA|ISLANDIA|ISRAEL|' +
  'ITALIA|JAMAICA|JAPAO|JERSEY|JORDANIA|KIRIBATI|KOSOVO|KUWEIT|LAOS|LESOTO|LETONIA|LIBANO|LIBERIA|LIBIA|' +
  'LIECHTENSTEIN|LITUANIA|LUXEMBURGO|MACAU|MACEDONIA DO NORTE|MADAGASCAR|MALASIA|MALAVI|MALDIVAS|MALI|MALTA|' +
  'MAN, ILHA DE|MARIANAS DO NORTE|MARROCOS|MARSHALL, ILHAS|MARTINICA|MAURICIO|MAURITANIA|MAYOTTE|MEXICO|' +
  'MIANMAR|MICRONESIA|MOCAMBIQUE|MOLDAVIA|MONACO|MONGOLIA|MONTENEGRO|MONTSERRAT|NAMIBIA|NAURU|NEPAL|NICARAGUA|' +
  'NIGER|NIGERIA|NIUE|NORFOLK, ILHA|NORUEGA|NOVA CALEDONIA|NOVA ZELANDIA|OMA|PAISES BAIXOS (HOLANDA)|PALAU|' +
  'PALESTINA|PANAMA|PAPUA NOVA GUINE|PAQUISTAO|PARAGUAI|PERU|PITCAIRN|POLINESIA FRANCESA|POLONIA|PORTO RICO|' +
  'PORTUGAL|QUENIA|QUIRGUIZ, REPUBLICA|REINO UNIDO|REPUBLICA CENTRO-AFRICANA|REPUBLICA DEMOCRATICA DO CONGO|' +
  'REPUBLICA DOMINICANA|REPUBLICA TCHECA|REUNIAO|ROMENIA|RUANDA|RUSSIA|SAARA OCIDENTAL|SALOMAO, ILHAS|SAMOA|' +
  'SAMOA AMERICANA|SAN MARINO|SANTA HELENA|SANTA LUCIA|SAO CRISTOVAO E NEVES|SAO MARTINHO|SAO PEDRO E MIQUELON|' +
  'SAO TOME E PRINCIPE|SAO VICENTE E GRANADINAS|SEICHELES|SENEGAL|SERRA LEOA|SERVIA|SIRIA|SOMALIA|SRI LANKA|' +
  'SUAZILANDIA|SUDAO|SUDAO DO SUL|SUECIA|SUICA|SURINAME|TADJIQUISTAO|TAILANDIA|TAIWAN|TANZANIA|TIMOR LESTE|TOGO|' +
  'TOKELAU|TONGA|TRINIDAD E TOBAGO|TUNISIA|TURCAS E CAICOS, ILHAS|TURCOMENISTAO|TURQUIA|TUVALU|UCRANIA|UGANDA|' +
  'URUGUAI|UZBEQUISTAO|VANUATU|VATICANO|VENEZUELA|VIETNA|VIRGENS, ILHAS (BRITANICAS)|VIRGENS, ILHAS (E.U.A.)|' +
  'WALLIS E FUTUNA|ZAMBIA|ZIMBABUE|COLIS POSTAUX|ZONA DO CANAL DO PANAMA|CANARIAS, ILHAS|MADEIRA, ILHA DA|' +
  'ACORES, ILHAS DOS|CRISTMAS, ILHA (NAVIDAD)|JOHNSTON, ILHAS|MIDWAY, ILHAS|WAKE, ILHA|BOUVET, ILHA|' +
  'HEARD E ILHAS MCDONALD, ILHA|GEORGIA DO SUL E SANDWICH DO SUL, ILHAS|TERRITORIO BRITANICO NO OCEANO INDICO|' +
  'TERRAS AUSTRAIS FRANCESAS|SVALBARD E JAN MAYEN|PROVISAO DE NAVIOS E AERONAVES|LEBUAN, ILHAS|DUBAI|ESCOCIA|' +
  'PAIS DE GALES|INGLATERRA|IRLANDA DO NORTE|ABU DHABI|SHARJAH|AJMAN|FUJAIRAH|RAS AL KHAIMAH|UMM AL QAIWAIN|' +
  'REPUBLICA DO KOSOVO|SINT MAARTEN|SABA|SANTO EUSTAQUIO|BALEARES, ILHAS|CEUTA|MELILLA|ZANZIBAR|TANGANICA'
).split('|');

/** ~250 3-digit codes: pinned ones where known, the others interpolated between them in alphabetical order. */
function gerarPaises(): Array<[string, string]> {
  const nomes = [...PAISES].sort();
  const usados = new Set<number>(Object.values(PAISES_FIXOS));
  const codigos = new Map<string, number>();
  let anterior = 1;
  for (let i = 0; i < nomes.length; ) {
    if (PAISES_FIXOS[nomes[i]] !== undefined) {
      anterior = PAISES_FIXOS[nomes[i]];
      codigos.set(nomes[i++], anterior);
      continue;
    }
    // the run of unpinned names up to the next pinned one (or the end of the code range)
    let j = i;
    while (j < nomes.length && PAISES_FIXOS[nomes[j]] === undefined) j++;
    const proximo = j < nomes.length ? PAISES_FIXOS[nomes[j]] : 999;
    const passo = (proximo - anterior) / (j - i + 1);
    for (let k = i; k < j; k++) {
      let c = Math.max(1, Math.round(anterior + passo * (k - i + 1)));
      while (usados.has(c)) c = c >= 998 ? 1 : c + 1;
      usados.add(c);
      codigos.set(nomes[k], c);
    }
    i = j;
  }
  return [...codigos].map(([nome, c]) => [pad(c, 3), nome] as [string, string]).sort((a, b) => a[0].localeCompare(b[0]));
}

/** Codes that look right but are missing from the tables, for the ~0.1% of dangling references. */
function codigosAusentes(s: Sorteador, existentes: Iterable<string>, largura: number, quantos: number, extras: string[] = []): string[] {
  const tem = new Set(existentes);
  const ausentes = extras.filter((c) => !tem.has(c));
  for (let tentativas = 0; ausentes.length < quantos && tentativas < 10_000; tentativas++) {
    const c = pad(s.int(10 ** largura), largura);
    if (!tem.has(c) && !ausentes.includes(c)) ausentes.push(c);
  }
  return ausentes;
}

// ---------------------------------------------------------------------------------------------------------
// Zip output

/**
 * One .zip holding one CSV, written as rows come: rows are batched into ~256 KB latin1 chunks fed to yazl
 * through a PassThrough, and `ocupado` exposes backpressure, so memory stays flat whatever the size.
 * Written as `<nome>.parcial` and renamed when complete.
 */
class ArquivoZip {
  linhas = 0;
  private pendente = '';
  private drenagem: Promise<void> | null = null;
  private readonly entrada = new PassThrough({ highWaterMark: 1 << 19 });
  private readonly zip = new ZipFile();
  private readonly gravado: Promise<void>;
  private readonly caminho: string;

  constructor(dir: string, readonly nome: string, nomeInterno: string) {
    this.caminho = path.join(dir, nome);
    this.zip.addReadStream(this.entrada, nomeInterno, { mtime: MTIME, compressionLevel: NIVEL_DEFLATE });
    const destino = createWriteStream(this.caminho + '.parcial');
    this.gravado = new Promise<void>((ok, falha) => {
      this.zip.on('error', falha);
      destino.on('error', falha);
      destino.on('close', ok);
    });
    this.gravado.catch(() => undefined); // reported by fechar(); avoids an unhandled rejection meanwhile
    this.zip.outputStream.pipe(destino);
  }

  escrever(texto: string, linhas = 1): void {
    this.pendente += texto;
    this.linhas += linhas;
    if (this.pendente.length >= 1 << 17) this.descarregar();
  }

  /** Resolves when yazl has caught up (null when there is no need to wait). */
  get ocupado(): Promise<void> | null {
    return this.drenagem;
  }

  private descarregar(): void {
    if (!this.pendente) return;
    const cabe = this.entrada.write(Buffer.from(this.pendente, 'latin1'));
    this.pendente = '';
    if (!cabe && !this.drenagem) this.drenagem = once(this.entrada, 'drain').then(() => void (this.drenagem = null));
  }

  /** Finishes the zip; resolves to its size in bytes. */
  async fechar(): Promise<number> {
    this.descarregar();
    this.entrada.end();
    this.zip.end();
    await this.gravado;
    await fs.rename(this.caminho + '.parcial', this.caminho);
    return (await fs.stat(this.caminho)).size;
  }
}

async function esperarVazao(saidas: ArquivoZip[]): Promise<void> {
  for (const s of saidas) {
    const p = s.ocupado;
    if (p) await p;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The generator

interface Empresa {
  basico: number;
  basicoTxt: string;
  natureza: Natureza;
  mei: boolean;
  uf: Uf;
  municipio: Municipio;
  /** day index of the head office's data_inicio_atividade */
  inicio: number;
  fantasia: string;
  cnae: string;
  email: string;
}

interface Parametros {
  versao: number;
  estabelecimentos: number;
  semente: number;
  arquivos: number;
}

interface Manifesto {
  parametros: Parametros;
  /** zip name -> size in bytes, to notice a generation damaged after the fact */
  arquivos: Record<string, number>;
  segundos: number;
  resumo: ResumoDaGeracao;
}

const NOME_PARTE = /^(Empresas|Estabelecimentos|Socios)\d+\.zip(\.parcial)?$/;

/** Reuses `dir/gerado.json` when it matches the parameters and every zip it lists is there, same size. */
async function geracaoExistente(dir: string, p: Parametros): Promise<ResumoDaGeracao | null> {
  let m: Manifesto;
  try {
    m = JSON.parse(await fs.readFile(path.join(dir, MANIFESTO), 'utf8'));
  } catch {
    return null;
  }
  const q = m.parametros ?? ({} as Parametros);
  if (q.versao !== p.versao || q.estabelecimentos !== p.estabelecimentos || q.semente !== p.semente || q.arquivos !== p.arquivos) return null;
  for (const [nome, bytes] of Object.entries(m.arquivos ?? {})) {
    const st = await fs.stat(path.join(dir, nome)).catch(() => null);
    if (!st || st.size !== bytes) return null;
  }
  return { ...m.resumo, dir };
}

export async function gerarArquivosReceita(dir: string, o: OpcoesDaGeracao): Promise<ResumoDaGeracao> {
  const total = o.estabelecimentos;
  const semente = o.semente ?? 1;
  const partes = o.arquivos ?? 4;
  if (!Number.isInteger(total) || total < 1 || total > 50_000_000) throw new Error(`estabelecimentos must be an integer in 1..50,000,000, got ${total}`);
  if (!Number.isInteger(partes) || partes < 1 || partes > 100) throw new Error(`arquivos must be an integer in 1..100, got ${partes}`);
  dir = path.resolve(dir);
  const parametros: Parametros = { versao: VERSAO, estabelecimentos: total, semente, arquivos: partes };
  const existente = await geracaoExistente(dir, parametros);
  if (existente) return existente;

  // Start clean: no manifest until the end (an interrupted run is never taken as complete), and no parts
  // left over from a generation with more parts, which an importer globbing Empresas*.zip would pick up.
  await fs.mkdir(dir, { recursive: true });
  await fs.rm(path.join(dir, MANIFESTO), { force: true });
  for (const f of await fs.readdir(dir)) if (NOME_PARTE.test(f)) await fs.rm(path.join(dir, f), { force: true });

  const inicioMs = Date.now();
  const tamanhos: Record<string, number> = {};
  const fechamentos: Promise<void>[] = [];
  const fechar = (z: ArquivoZip) => fechamentos.push(z.fechar().then((bytes) => void (tamanhos[z.nome] = bytes)));

  // ---- code tables (own PRNG stream, so they do not shift when the main stream changes)
  const st = new Sorteador(semente ^ 0x9e3779b9);
  const cnaes = gerarCnaes(st);
  const municipios = gerarMunicipios(st);
  const paises = gerarPaises();
  const tabelaMunicipios: Array<[string, string]> = municipios.map((m) => [m.codigo, m.nome]);
  tabelaMunicipios.push([MUNICIPIO_EXTERIOR, 'EXTERIOR']);
  tabelaMunicipios.sort((a, b) => a[0].localeCompare(b[0]));
  const tabelas: Array<[string, string, Array<[string, string]>]> = [
    ['Cnaes.zip', 'CNAECSV', [...cnaes].sort((a, b) => a.codigo.localeCompare(b.codigo)).map((c) => [c.codigo, c.descricao])],
    ['Motivos.zip', 'MOTICSV', MOTIVOS],
    ['Municipios.zip', 'MUNICCSV', tabelaMunicipios],
    ['Naturezas.zip', 'NATJUCSV', NATUREZAS.map((n) => [n.codigo, n.descricao])],
    ['Paises.zip', 'PAISCSV', paises],
    ['Qualificacoes.zip', 'QUALSCSV', QUALIFICACOES],
  ];
  for (const [nome, sufixo, linhas] of tabelas) {
    const z = new ArquivoZip(dir, nome, `F.K03200$Z.${REF}.${sufixo}`);
    for (const l of linhas) z.escrever(linha(l));
    if (nome === 'Paises.zip') z.escrever('\n'); // a trailing blank line, as some real files have
    fechar(z);
  }

  // ---- samplers
  const cnaeZipf = zipf(cnaes.map((c) => c.codigo), 3);
  const naturezas = new Tabela(NATUREZAS.map((n) => [n, n.peso] as const));
  const ufs = new Tabela(UFS.map((u) => [u, u.peso] as const));
  const municipiosPorUf = new Map<Uf, Tabela<Municipio>>();
  for (const uf of UFS) municipiosPorUf.set(uf, zipf(municipios.filter((m) => m.uf === uf), 1, 1.1));
  const ausentes = {
    cnae: codigosAusentes(st, cnaes.map((c) => c.codigo), 7, 20, ['8888888', '0000000']),
    municipio: codigosAusentes(st, [...municipios.map((m) => m.codigo), MUNICIPIO_EXTERIOR], 4, 20),
    natureza: codigosAusentes(st, NATUREZAS.map((n) => n.codigo), 4, 5, ['0000']),
    qualificacao: codigosAusentes(st, QUALIFICACOES.map((q) => q[0]), 2, 5),
    motivo: codigosAusentes(st, MOTIVOS.map((m) => m[0]), 2, 5),
    pais: codigosAusentes(st, paises.map((p) => p[0]), 3, 5),
  };
  const faixasEtarias = new Tabela<string>([['1', 0.5], ['2', 1], ['3', 12], ['4', 25], ['5', 24], ['6', 18], ['7', 12], ['8', 5], ['9', 2.5]]);
  const sociosLimitada = new Tabela<number>([[1, 45], [2, 40], [3, 8], [4, 3.5], [5, 1.5], [6, 0.8], [7, 0.5], [8, 0.3], [9, 0.2], [10, 0.2]]);
  const secundarias = new Tabela<number>([[0, 55], [1, 12], [2, 10], [3, 8], [4, 6], [5, 5], [6, 4]]);
  const paisesSocios = ['249', '160', '607', '063', '023', '275', '386', '245', '845', '586', '399', '628'];

  // ---- company sizes (number of establishments), drawn up front from their own stream, so that the
  // company count is known and the Empresas/Socios parts can be cut evenly
  const tamanhos1 = new Sorteador(semente ^ 0x5bd1e995);
  const grupos: number[] = [];
  for (let falta = total; falta > 0; ) {
    const u = tamanhos1.r();
    let n = u < 0.96 ? 1 : u < 0.9996 ? 2 + Math.min(28, Math.floor(-Math.log(1 - tamanhos1.r()) * 0.9)) : Math.floor(tamanhos1.logUniforme(10, 400));
    n = Math.min(n, falta);
    grupos.push(n);
    falta -= n;
  }
  const nEmpresas = grupos.length;
  // cnpj_basico: increasing with random gaps, spread over 00000000..99999999 (with slack for the noise)
  const passoMedio = Math.max(1, Math.floor(99_000_000 / nEmpresas));

  // ---- main stream
  const s = new Sorteador(semente);
  const desconhecido = (codigo: string, lista: string[]) => (s.r() < P_DESCONHECIDO ? s.um(lista) : codigo);
  const dobrarEspaco = (t: string) => {
    const u = s.r();
    return u < 0.002 ? t.replace(' ', '  ') : u < 0.003 ? t + ' ' : t;
  };

  const pessoa = (): string => {
    let nome = L_PRENOMES.um(s);
    if (s.chance(0.4)) nome += ' ' + L_PRENOMES.um(s);
    if (s.chance(0.35)) nome += ' ' + s.um(PARTICULAS);
    nome += ' ' + L_SOBRENOMES.um(s);
    if (s.chance(0.7)) nome += ' ' + L_SOBRENOMES.um(s);
    return nome;
  };

  const razaoSocial = (e: Empresa): string => {
    const n = e.natureza;
    const sufixoLtda = () => s.um([' LTDA', ' LTDA', ' LTDA', ' LTDA', ' LTDA ME', ' LTDA - ME', ' LTDA - EPP', ' LIMITADA']);
    switch (n.categoria) {
      case 'individual':
        // MEIs: "12.345.678 MARIA DA SILVA" (the CNPJ básico is part of the name since 2016)
        return e.mei && s.chance(0.85) ? `${e.basicoTxt.slice(0, 2)}.${e.basicoTxt.slice(2, 5)}.${e.basicoTxt.slice(5)} ${pessoa()}` : pessoa();
      case 'limitada': {
        if (n.responsavel === '65') return `${pessoa()} ${s.um([n.codigo === '2321' ? 'SOCIEDADE INDIVIDUAL DE ADVOCACIA' : 'EIRELI', 'EIRELI', 'EIRELI - ME'])}`;
        const u = s.r();
        if (u < 0.35) return `${L_SOBRENOMES.um(s)} ${L_ATIVIDADES.um(s)}${sufixoLtda()}`;
        if (u < 0.65) return `${L_FANTASIA.um(s)} ${L_ATIVIDADES.um(s)}${sufixoLtda()}`;
        if (u < 0.85) return `${pessoa()}${sufixoLtda()}`;
        return `${L_NEGOCIOS.um(s)} ${L_FANTASIA.um(s)}${sufixoLtda()}`;
      }
      case 'anonima':
        return `${s.chance(0.5) ? L_FANTASIA.um(s) : L_SOBRENOMES.um(s)} ${L_ATIVIDADES.um(s)} ${s.um(['S.A.', 'S/A', 'SA', 'S.A'])}`;
      case 'publico': {
        const m = e.municipio.nome;
        if (n.ente === 'uniao') return s.um(['MINISTERIO DA FAZENDA', 'JUSTICA FEDERAL DE PRIMEIRO GRAU', 'INSTITUTO NACIONAL DO SEGURO SOCIAL', 'UNIVERSIDADE FEDERAL', 'COMANDO DO EXERCITO']);
        if (n.ente === 'estado') return `${s.um(['SECRETARIA DE ESTADO DA SAUDE', 'SECRETARIA DE ESTADO DA EDUCAÇÃO', 'POLICIA MILITAR DO ESTADO', 'TRIBUNAL DE JUSTICA DO ESTADO', 'FUNDO ESTADUAL DE SAUDE'])} - ${e.uf.sigla}`;
        return `${s.um(['MUNICIPIO DE', 'CAMARA MUNICIPAL DE', 'FUNDO MUNICIPAL DE SAUDE DE', 'SECRETARIA MUNICIPAL DE EDUCAÇÃO DE', 'FUNDO MUNICIPAL DE ASSISTENCIA SOCIAL DE', 'SERVIÇO AUTÔNOMO DE ÁGUA E ESGOTO DE'])} ${m}`;
      }
      case 'associacao':
        switch (n.codigo) {
          case '3085':
          case '3310':
            return `CONDOMINIO ${s.um(['EDIFICIO', 'RESIDENCIAL', 'CONJUNTO RESIDENCIAL', 'DO EDIFÍCIO'])} ${L_FANTASIA.um(s)}`;
          case '3220':
            return `${s.um(['IGREJA EVANGELICA ASSEMBLEIA DE DEUS', 'IGREJA BATISTA', 'PARÓQUIA', 'COMUNIDADE CRISTÃ', 'CENTRO ESPIRITA'])} ${L_FANTASIA.um(s)}`;
          case '3271':
          case '3263':
          case '3255':
          case '3280':
            return `${s.um(['PARTIDO DEMOCRATICO', 'PARTIDO SOCIAL', 'PARTIDO LIBERAL', 'PARTIDO DOS TRABALHADORES', 'MOVIMENTO DEMOCRATICO'])} - ${s.um(['COMISSAO PROVISORIA', 'DIRETORIO MUNICIPAL', 'ÓRGÃO DE DIREÇÃO MUNICIPAL'])} DE ${e.municipio.nome}`;
          case '2143':
          case '2330':
            return `COOPERATIVA ${s.um(['DE CRÉDITO', 'AGROPECUÁRIA', 'DE TRABALHO', 'DE TRANSPORTE', 'DOS PRODUTORES'])} ${L_FANTASIA.um(s)} ${s.um(['LTDA', ''])}`.trimEnd();
          case '3034':
            return `${s.um(['CARTORIO DO 1 OFICIO', 'TABELIONATO DE NOTAS', 'REGISTRO CIVIL DAS PESSOAS NATURAIS'])} DE ${e.municipio.nome}`;
          case '3131':
            return `SINDICATO DOS ${s.um(['TRABALHADORES RURAIS', 'COMERCIÁRIOS', 'SERVIDORES PÚBLICOS MUNICIPAIS', 'METALÚRGICOS'])} DE ${e.municipio.nome}`;
          default:
            return `${s.um(['ASSOCIAÇÃO DE MORADORES DO BAIRRO', 'ASSOCIACAO DOS AMIGOS DE', 'ASSOCIACAO ESPORTIVA', 'INSTITUTO', 'FUNDAÇÃO', 'ASSOCIACAO DE PAIS E MESTRES DA ESCOLA'])} ${L_FANTASIA.um(s)}`;
        }
      case 'exterior':
        return `${s.um(SOBRENOMES_ESTRANGEIROS)} ${s.um(['HOLDINGS LLC', 'INTERNATIONAL INC', 'GMBH', 'S.A.S.', 'INVESTMENTS LTD', 'TRADING CO'])}`;
    }
  };

  const nomeFantasia = (e: Empresa): string => {
    if (e.natureza.categoria === 'publico' || s.chance(0.45)) return '';
    const u = s.r();
    if (u < 0.5) return `${L_NEGOCIOS.um(s)} ${L_FANTASIA.um(s)}`;
    if (u < 0.75) return L_FANTASIA.um(s);
    return `${L_NEGOCIOS.um(s)} ${s.chance(0.5) ? L_SOBRENOMES.um(s) : L_PRENOMES.um(s)}`;
  };

  /** Some have one: personal mail, the company's domain, or the accounting office shared by many companies. */
  const email = (): string => {
    if (!s.chance(0.35)) return '';
    const u = s.r();
    let end: string;
    if (u < 0.4) end = `${s.um(L_PRENOMES.semAcento)}${s.um(['.', '_', ''])}${s.um(L_SOBRENOMES.semAcento)}${s.chance(0.4) ? s.int(100) : ''}@${s.um(DOMINIOS)}`;
    else if (u < 0.75) end = `${s.um(['contato', 'financeiro', 'comercial', 'adm', 'vendas'])}@${s.um(L_FANTASIA.semAcento).replace(/ /g, '')}${s.int(1000)}.com.br`;
    else end = `contabil${s.um(L_SOBRENOMES.semAcento)}${s.int(300)}@${s.um(DOMINIOS)}`;
    end = end.toLowerCase();
    return s.chance(0.35) ? end.toUpperCase() : end;
  };

  const capitalSocial = (e: Empresa): string => {
    const c = e.natureza.categoria;
    if (c === 'publico' || c === 'associacao' || (c === 'individual' && s.chance(0.25))) return '0,00';
    if (c === 'individual') return `${s.entre(1, 40) * 500},00`;
    if (c === 'anonima') return `${Math.floor(s.logUniforme(1e5, 5e10))},${pad(s.int(100), 2)}`;
    const v = Math.floor(s.logUniforme(1000, 5e6));
    return s.chance(0.8) ? `${Math.max(1000, Math.round(v / 1000) * 1000)},00` : `${v},${pad(s.int(100), 2)}`;
  };

  const porte = (e: Empresa): string => {
    if (e.mei) return '01';
    const u = s.r();
    switch (e.natureza.categoria) {
      case 'individual':
        return u < 0.8 ? '01' : u < 0.9 ? '03' : u < 0.95 ? '05' : '00';
      case 'limitada':
        return u < 0.6 ? '01' : u < 0.75 ? '03' : u < 0.95 ? '05' : '00';
      case 'associacao':
        return u < 0.8 ? '05' : '00';
      default:
        return u < 0.9 ? '05' : '00';
    }
  };

  const enteFederativo = (e: Empresa): string => {
    switch (e.natureza.ente) {
      case 'uniao':
        return 'UNIÃO';
      case 'estado':
        return s.chance(0.5) ? e.uf.sigla : e.uf.nome;
      case 'municipio':
        return `${e.municipio.nome.replace(/\bSAO\b/g, 'SÃO').replace(/\bJOAO\b/g, 'JOÃO').replace(/CONCEICAO/g, 'CONCEIÇÃO')} - ${e.uf.sigla}`;
      default:
        return '';
    }
  };

  const linhaEmpresa = (e: Empresa): string => {
    const n = e.natureza;
    let responsavel = n.responsavel;
    if (n.categoria === 'limitada' && responsavel === '49' && s.chance(0.15)) responsavel = s.um(['05', '22', '28']);
    return linha([
      e.basicoTxt,
      dobrarEspaco(razaoSocial(e)),
      desconhecido(n.codigo, ausentes.natureza),
      desconhecido(responsavel, ausentes.qualificacao),
      capitalSocial(e),
      porte(e),
      enteFederativo(e),
    ]);
  };

  /** Rows of the company's partners (quadro societário); returns [text, count]. */
  const linhasSocios = (e: Empresa): [string, number] => {
    const n = e.natureza;
    let quantos: number;
    switch (n.categoria) {
      case 'individual':
        quantos = 0;
        break;
      case 'limitada':
        quantos = n.responsavel === '65' ? 1 : sociosLimitada.sortear(s);
        break;
      case 'anonima':
        quantos = s.entre(2, 10);
        break;
      case 'publico':
        quantos = s.chance(0.3) ? 1 : 0;
        break;
      case 'associacao':
        quantos = n.responsavel === '19' || n.responsavel === '32' ? 1 : s.um([1, 1, 1, 2, 2, 3]);
        break;
      case 'exterior':
        quantos = 1;
        break;
    }
    let texto = '';
    for (let i = 0; i < quantos; i++) {
      // identificador: 1 legal entity, 2 individual, 3 foreigner
      const u = s.r();
      const id = n.categoria === 'limitada' || n.categoria === 'anonima' ? (u < (n.categoria === 'anonima' ? 0.7 : 0.9) ? 2 : u < 0.98 ? 1 : 3) : n.categoria === 'exterior' && s.chance(0.5) ? 3 : 2;
      let nome: string;
      let documento: string;
      let qualificacao: string;
      let faixa: string;
      let pais = '';
      let representante = '***000000**';
      let nomeRepresentante = '';
      let qualificacaoRepresentante = '00';
      if (id === 1) {
        // another company (often one of ours) holding shares
        const b = s.chance(0.5) ? Math.max(0, e.basico - s.int(1_000_000)) : s.int(100_000_000);
        const ordem = 1;
        nome = `${L_FANTASIA.um(s)} ${s.um(['PARTICIPAÇÕES', 'PARTICIPACOES', 'HOLDING', 'INVESTIMENTOS', 'EMPREENDIMENTOS'])} ${s.um(['LTDA', 'S.A.', 'S/A'])}`;
        documento = pad(b, 8) + pad(ordem, 4) + digitosVerificadores(b, ordem);
        qualificacao = n.categoria === 'anonima' ? s.um(['22', '48', '02']) : s.um(['22', '49', '48']);
        faixa = '0';
      } else if (id === 3) {
        const empresaEstrangeira = s.chance(0.3);
        nome = empresaEstrangeira ? `${s.um(SOBRENOMES_ESTRANGEIROS)} ${s.um(['HOLDINGS LLC', 'GMBH', 'INVESTMENTS LTD', 'B.V.'])}` : `${s.um(NOMES_ESTRANGEIROS)} ${s.um(SOBRENOMES_ESTRANGEIROS)}`;
        documento = '***999999**';
        qualificacao = empresaEstrangeira ? '37' : n.categoria === 'exterior' ? '17' : '38';
        faixa = empresaEstrangeira ? '0' : faixasEtarias.sortear(s);
        pais = desconhecido(s.um(paisesSocios), ausentes.pais);
        // foreigners are represented by a procurador resident in Brazil
        representante = `***${pad(s.int(1_000_000), 6)}**`;
        nomeRepresentante = pessoa();
        qualificacaoRepresentante = '17';
      } else {
        nome = pessoa();
        documento = `***${pad(s.int(1_000_000), 6)}**`;
        faixa = faixasEtarias.sortear(s);
        switch (n.categoria) {
          case 'limitada':
            qualificacao = n.responsavel === '65' ? '65' : i === 0 ? (s.chance(0.85) ? '49' : '05') : s.um(['49', '49', '22', '22', '05']);
            if (qualificacao === '22' && s.chance(0.03)) {
              // a minor partner, represented by a parent
              qualificacao = '30';
              faixa = s.um(['1', '2']);
              representante = `***${pad(s.int(1_000_000), 6)}**`;
              nomeRepresentante = pessoa();
              qualificacaoRepresentante = s.um(['14', '15']);
            }
            break;
          case 'anonima':
            qualificacao = i === 0 ? '16' : s.um(['10', '10', '10', '08', '05']);
            break;
          case 'associacao':
            qualificacao = n.responsavel === '16' ? (i === 0 ? '16' : s.um(['10', '18', '33'])) : n.responsavel;
            break;
          default:
            qualificacao = n.responsavel;
        }
      }
      const entrada = s.chance(0.6) ? e.inicio : diaEntre(s, e.inicio);
      texto += linha([
        e.basicoTxt,
        String(id),
        dobrarEspaco(nome),
        documento,
        desconhecido(qualificacao, ausentes.qualificacao),
        DIAS[entrada],
        pais,
        representante,
        nomeRepresentante,
        qualificacaoRepresentante,
        faixa,
      ]);
    }
    return [texto, quantos];
  };

  /** The company's Simples Nacional / MEI row, or '' (~40% of companies have one). */
  const linhaSimples = (e: Empresa): string => {
    const c = e.natureza.categoria;
    const tem = e.mei || (c === 'individual' ? s.chance(0.35) : c === 'limitada' ? s.chance(0.25) : s.chance(0.02));
    if (!tem) return '';
    const desde = Math.max(e.inicio, DIA_SIMPLES);
    const opcao = diaEntre(s, desde);
    const optante = e.mei || s.chance(0.6);
    const exclusao = optante ? semData(s) : DIAS[diaEntre(s, opcao + 1)];
    let mei = 'N';
    let opcaoMei = semData(s);
    let exclusaoMei = semData(s);
    if (e.mei) {
      mei = 'S';
      opcaoMei = DIAS[Math.max(opcao, DIA_MEI)];
    } else if (c === 'individual' && s.chance(0.3)) {
      // was a MEI once, left it (grew or gave up)
      const o2 = diaEntre(s, Math.max(opcao, DIA_MEI));
      opcaoMei = DIAS[o2];
      exclusaoMei = DIAS[diaEntre(s, o2 + 1)];
    }
    return linha([e.basicoTxt, optante ? 'S' : 'N', DIAS[opcao], exclusao, mei, opcaoMei, exclusaoMei]);
  };

  const telefone = (): string => (s.chance(0.45) ? '9' + pad(s.int(100_000_000), 8) : String(s.entre(2, 5)) + pad(s.int(10_000_000), 7));

  const complemento = (): string => {
    if (s.chance(0.6)) return '';
    const n = () => s.entre(1, 1500);
    switch (s.int(14)) {
      case 0: return `SALA ${n()}`;
      case 1: return `LOJA ${pad(s.entre(1, 30), 2)}`;
      case 2: return `APT ${n()}`;
      case 3: return `BLOCO ${s.um(['A', 'B', 'C', 'D'])}`;
      case 4: return `CASA ${s.entre(1, 20)}`;
      case 5: return `ANDAR ${s.entre(1, 30)}`;
      case 6: return `GALPAO ${s.entre(1, 12)}`;
      case 7: return `BOX ${s.entre(1, 200)}`;
      case 8: return `QUADRA ${s.entre(1, 99)} LOTE ${s.entre(1, 40)}`;
      case 9: return 'FUNDOS';
      case 10: return s.chance(0.01) ? `SALA ${n()}; BLOCO ${s.um(['A', 'B'])}` : 'TERREO'; // a rare `;` inside a quoted value
      case 11: return `SALA ${n()} ANDAR ${s.entre(1, 25)}`;
      case 12: return `CONJ ${n()}`;
      default: return `KM ${s.entre(1, 400)}`;
    }
  };

  const bairro = (): string => {
    const u = s.r();
    if (u < 0.22) return 'CENTRO';
    if (u < 0.25) return 'ZONA RURAL';
    if (u < 0.26) return '';
    if (u < 0.5) return `JARDIM ${s.chance(0.5) ? L_FANTASIA.um(s) : L_PRENOMES.um(s)}`;
    if (u < 0.68) return `VILA ${s.chance(0.5) ? L_PRENOMES.um(s) : palavraInventada(s)}`;
    if (u < 0.78) return `PARQUE ${L_FANTASIA.um(s)}`;
    if (u < 0.84) return `CONJUNTO ${s.chance(0.5) ? L_FANTASIA.um(s) : palavraInventada(s)}`;
    if (u < 0.9) return `NOVA ${palavraInventada(s)}`;
    return palavraInventada(s);
  };

  const linhaEstabelecimento = (e: Empresa, ordem: number): string => {
    const matriz = ordem === 1;
    // where: the head office's place for most branches, else elsewhere in the UF or the country
    let uf = e.uf;
    let municipio = e.municipio;
    if (!matriz) {
      const u = s.r();
      if (u < 0.3) municipio = municipiosPorUf.get(uf)!.sortear(s);
      else if (u < 0.4) {
        uf = ufs.sortear(s);
        municipio = municipiosPorUf.get(uf)!.sortear(s);
      }
    }
    const noExterior = e.natureza.categoria === 'exterior' && matriz && e.natureza.codigo !== '2178' && e.natureza.codigo !== '2194';
    const inicio = matriz ? e.inicio : diaEntre(s, e.inicio);
    const situacao = SITUACOES.sortear(s);
    let dataSituacao: string;
    if (situacao === '02') dataSituacao = DIAS[s.chance(0.7) ? inicio : inicio < DIA_2005_11_03 && s.chance(0.6) ? DIA_2005_11_03 : diaEntre(s, inicio)];
    else if (situacao === '01' && s.chance(0.3)) dataSituacao = semData(s);
    else dataSituacao = DIAS[diaEntre(s, inicio)];
    const motivo = desconhecido(MOTIVOS_POR_SITUACAO[situacao].sortear(s), ausentes.motivo);
    let cnae = matriz ? e.cnae : e.natureza.cnae ?? (s.chance(0.8) ? e.cnae : cnaeZipf.sortear(s));
    cnae = desconhecido(cnae, ausentes.cnae);
    let secundaria = '';
    for (let k = secundarias.sortear(s); k > 0; k--) {
      const c = cnaeZipf.sortear(s);
      if (c !== cnae && !secundaria.includes(c)) secundaria += (secundaria ? ',' : '') + c;
    }
    const ddd = String(s.um(uf.ddds));
    const temTelefone = s.chance(0.8);
    const temTelefone2 = temTelefone && s.chance(0.15);
    const temFax = temTelefone && s.chance(0.05);
    const especial = s.chance(0.001) ? s.um(SITUACOES_ESPECIAIS) : '';
    const cidadeExterior = noExterior ? s.um(CIDADES_EXTERIOR) : null;
    const logradouro = s.chance(0.4) ? pessoa() : L_LOGRADOUROS.um(s);
    const numero = s.chance(0.06) ? s.um(['S/N', 'S/N', 'S/N', 'SN', 'SN', '0']) : String(Math.floor(s.logUniforme(1, 10_000)));
    return linha([
      e.basicoTxt,
      pad(ordem, 4),
      digitosVerificadores(e.basico, ordem),
      matriz ? '1' : '2',
      matriz || s.chance(0.7) ? e.fantasia : nomeFantasia(e), // branches mostly keep the brand
      situacao,
      dataSituacao,
      motivo,
      cidadeExterior ? cidadeExterior[0] : '',
      cidadeExterior ? desconhecido(cidadeExterior[1], ausentes.pais) : s.chance(0.01) ? desconhecido('105', ausentes.pais) : '',
      DIAS[inicio],
      cnae,
      secundaria,
      TIPOS_LOGRADOURO.sortear(s),
      dobrarEspaco(logradouro),
      numero,
      complemento(),
      bairro(),
      cidadeExterior ? '' : pad(s.entre(uf.cep[0], uf.cep[1]), 5) + pad(s.int(1000), 3),
      cidadeExterior ? 'EX' : uf.sigla,
      cidadeExterior ? MUNICIPIO_EXTERIOR : desconhecido(municipio.codigo, ausentes.municipio),
      temTelefone ? ddd : '',
      temTelefone ? telefone() : '',
      temTelefone2 ? ddd : '',
      temTelefone2 ? telefone() : '',
      temFax ? ddd : '',
      temFax ? String(s.entre(2, 5)) + pad(s.int(10_000_000), 7) : '',
      matriz || s.chance(0.5) ? e.email : email(),
      especial,
      especial ? DIAS[diaEntre(s, inicio)] : '',
    ]);
  };

  // ---- outputs: parts are cut at even company counts (Empresas, Socios) and even establishment counts
  // (Estabelecimentos), so the cuts fall at different CNPJs, as in the real dump
  const abrirParte = (tipo: 'Empresas' | 'Estabelecimentos' | 'Socios', k: number) =>
    new ArquivoZip(dir, `${tipo}${k}.zip`, `K3241.K03200Y${k}.${REF}.${{ Empresas: 'EMPRECSV', Estabelecimentos: 'ESTABELE', Socios: 'SOCIOCSV' }[tipo]}`);
  let parteEmpresas = 0;
  let parteEstab = 0;
  let zEmpresas = abrirParte('Empresas', 0);
  let zSocios = abrirParte('Socios', 0);
  let zEstab = abrirParte('Estabelecimentos', 0);
  const zSimples = new ArquivoZip(dir, 'Simples.zip', `F.K03200$W.SIMPLES.CSV.${REF}`);
  const fimEmpresas = (k: number) => Math.round(((k + 1) * nEmpresas) / partes);
  const fimEstab = (k: number) => Math.round(((k + 1) * total) / partes);
  const finalComBrancos = (z: ArquivoZip) => {
    if (s.chance(0.3)) z.escrever(s.chance(0.5) ? '\n' : '\n\n', 0);
  };
  const proximaParteEmpresas = () => {
    finalComBrancos(zEmpresas);
    finalComBrancos(zSocios);
    fechar(zEmpresas);
    fechar(zSocios);
    parteEmpresas++;
    zEmpresas = abrirParte('Empresas', parteEmpresas);
    zSocios = abrirParte('Socios', parteEmpresas);
  };
  const proximaParteEstab = () => {
    finalComBrancos(zEstab);
    fechar(zEstab);
    zEstab = abrirParte('Estabelecimentos', ++parteEstab);
  };

  // sample: every passo-th establishment, so it is spread evenly over the data (and over the parts)
  const passoAmostra = Math.ceil(total / MAX_AMOSTRA);
  const cnpjs: string[] = [];
  let nEstab = 0;
  let nSocios = 0;
  let nSimples = 0;
  let basico = s.int(passoMedio);
  const progresso = Math.max(100_000, Math.ceil(total / 20 / 100_000) * 100_000);

  for (let c = 0; c < nEmpresas; c++) {
    if (c > 0) basico += 1 + s.int(2 * passoMedio - 1);
    const natureza = naturezas.sortear(s);
    const uf = natureza.categoria === 'exterior' ? s.um(UFS) : ufs.sortear(s);
    const municipio = municipiosPorUf.get(uf)!.sortear(s);
    const publico = natureza.categoria === 'publico';
    const e: Empresa = {
      basico,
      basicoTxt: pad(basico, 8),
      natureza,
      mei: natureza.codigo === '2135' && s.chance(0.55),
      uf,
      municipio,
      inicio: publico ? diaEntre(s, diaDe(1960), diaDe(2005)) : Math.max(0, ULTIMO_DIA - Math.floor(-Math.log(1 - s.r()) * 365 * 10)),
      fantasia: '',
      cnae: natureza.cnae ?? cnaeZipf.sortear(s),
      email: email(),
    };
    if (e.mei) e.inicio = Math.max(e.inicio, diaEntre(s, DIA_MEI));
    e.fantasia = nomeFantasia(e);

    while (parteEmpresas < partes - 1 && c === fimEmpresas(parteEmpresas)) proximaParteEmpresas();
    zEmpresas.escrever(linhaEmpresa(e));
    const [socios, quantos] = linhasSocios(e);
    if (quantos) zSocios.escrever(socios, quantos);
    nSocios += quantos;
    const simples = linhaSimples(e);
    if (simples) {
      zSimples.escrever(simples);
      nSimples++;
    }

    // establishments: head office 0001, branches 0002, 0003... with occasional gaps in the numbering
    for (let j = 0, ordem = 1; j < grupos[c]; j++, ordem += s.chance(0.05) ? s.entre(2, 20) : 1) {
      while (parteEstab < partes - 1 && nEstab === fimEstab(parteEstab)) proximaParteEstab();
      zEstab.escrever(linhaEstabelecimento(e, ordem));
      if (nEstab % passoAmostra === passoAmostra >> 1) cnpjs.push(e.basicoTxt + pad(ordem, 4) + digitosVerificadores(e.basico, ordem));
      nEstab++;
      if (nEstab % progresso === 0) {
        const seg = (Date.now() - inicioMs) / 1000;
        process.stderr.write(`[leads-gerador] ${nEstab.toLocaleString('en')}/${total.toLocaleString('en')} estabelecimentos, ${seg.toFixed(1)} s, rss ${Math.round(process.memoryUsage.rss() / 2 ** 20)} MB, heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MB\n`);
      }
    }
    if (zEmpresas.ocupado || zSocios.ocupado || zEstab.ocupado || zSimples.ocupado) await esperarVazao([zEmpresas, zSocios, zEstab, zSimples]);
  }
  // every part exists, even when there are fewer rows than parts
  while (parteEmpresas < partes - 1) proximaParteEmpresas();
  while (parteEstab < partes - 1) proximaParteEstab();
  finalComBrancos(zEmpresas);
  finalComBrancos(zSocios);
  zEstab.escrever('\n', 0); // the last Estabelecimentos part always ends with a blank line
  for (const z of [zEmpresas, zSocios, zEstab, zSimples]) fechar(z);
  await Promise.all(fechamentos);

  const resumo: ResumoDaGeracao = { dir, estabelecimentos: nEstab, empresas: nEmpresas, socios: nSocios, simples: nSimples, cnpjs };
  const manifesto: Manifesto = {
    parametros,
    arquivos: Object.fromEntries(Object.entries(tamanhos).sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))),
    segundos: Math.round((Date.now() - inicioMs) / 100) / 10,
    resumo,
  };
  // written last, atomically: its presence means the generation is complete
  await fs.writeFile(path.join(dir, MANIFESTO + '.parcial'), JSON.stringify(manifesto));
  await fs.rename(path.join(dir, MANIFESTO + '.parcial'), path.join(dir, MANIFESTO));
  return resumo;
}

// ---------------------------------------------------------------------------------------------------------
// CLI

async function principal(args: string[]): Promise<number> {
  const opcoes = new Map<string, string>();
  const posicionais: string[] = [];
  for (const a of args) {
    const m = /^--([a-z]+)=(.*)$/.exec(a);
    if (m) opcoes.set(m[1], m[2]);
    else posicionais.push(a);
  }
  const [dir, quantos] = posicionais;
  if (!dir) {
    console.error('usage: bench/leads-gerador.ts <dir> [estabelecimentos=1000000] [--semente=1] [--arquivos=4]');
    return 2;
  }
  const inteiro = (v: string | undefined, padrao: number) => (v === undefined ? padrao : Number(v.replace(/[_.,]/g, '')));
  const inicio = Date.now();
  const r = await gerarArquivosReceita(dir, {
    estabelecimentos: inteiro(quantos, 1_000_000),
    semente: inteiro(opcoes.get('semente'), 1),
    arquivos: inteiro(opcoes.get('arquivos'), 4),
  });
  const { cnpjs, ...resto } = r;
  console.log(JSON.stringify({ ...resto, amostraDeCnpjs: cnpjs.length, segundos: (Date.now() - inicio) / 1000 }));
  console.error(`[leads-gerador] done in ${((Date.now() - inicio) / 1000).toFixed(1)} s, max RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  return 0;
}

if (require.main === module) {
  principal(process.argv.slice(2)).then(
    (codigo) => (process.exitCode = codigo),
    (erro) => {
      console.error(erro);
      process.exitCode = 1;
    },
  );
}
