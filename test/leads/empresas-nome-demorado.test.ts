import { cnpjsDoNome, LIMITES_DO_NOME } from '../../api/leads/busca-por-nome';
import { novaGeracaoDosDados } from '../../api/leads/geracao';
import { banco, lerDemorado, tempoEsgotado } from '../../lib/database';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { estabelecimento, inserir, Leads, leadsDe } from './apoio-empresas';

/*
 * A `nome` common enough that listing it from the full-text index outlasts its time limit
 * (busca-por-nome.ts): MariaDB stops the search inside InnoDB's full-text code and answers error
 * 188 ("aborted by user"), not the 1969 of a statement stopped elsewhere (a LOCK TABLES wait, as in
 * empresas-contagem.test.ts). The search must still take the row-by-row walk, never a 500.
 */

const COMUNS = 40_000;

let suite: SuiteDeTeste;
let leads: Leads;
let master: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'leads']);
  leads = leadsDe(suite);
  const linhas = Array.from({ length: COMUNS }, (_, i) =>
    estabelecimento({ cnpj_basico: String(i + 1).padStart(8, '0'), nome_fantasia: `ATACADO CENTRAL ${i + 1}` }),
  );
  for (let i = 0; i < linhas.length; i += 2_000) await inserir('estabelecimento', linhas.slice(i, i + 2_000));
  await novaGeracaoDosDados();
  master = await leads.admin();
}, 60_000);
afterAll(() => suite.encerrar());

const prazo = LIMITES_DO_NOME.prazoS;
// a thousandth of a second: the index holds tens of thousands of matches, which take far longer
beforeEach(async () => {
  LIMITES_DO_NOME.prazoS = 0.001;
  await novaGeracaoDosDados();
});
afterEach(() => (LIMITES_DO_NOME.prazoS = prazo));

test('a full-text read stopped by its time limit is read as a time-out', async () => {
  const select = 'SELECT e.cnpj FROM estabelecimento e WHERE MATCH(e.nome_fantasia) AGAINST (? IN BOOLEAN MODE) LIMIT ?';
  const erro = await lerDemorado(banco('leads'), select, ['+atacado*', 5001], 0.001).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(erro).toBeDefined();
  expect(tempoEsgotado(erro)).toBe(true);
});

test('a name whose listing runs out of time is matched row by row: the page answers 200 with it', async () => {
  expect(await cnpjsDoNome('atacado')).toBeUndefined();
  const res = await leads.listar(master, { nome: 'atacado central', tamanho: 5 });
  expect(res.status).toBe(200);
  expect(res.body.itens.map((i: { cnpj: string }) => i.cnpj)).toEqual(
    Array.from({ length: 5 }, (_, i) => expect.stringMatching(new RegExp(`^${String(i + 1).padStart(8, '0')}0001`))),
  );
  expect(res.body.itens.every((i: { nome_fantasia: string }) => /^ATACADO CENTRAL /.test(i.nome_fantasia))).toBe(true);
});
