import { contarEmpresas, contarFiltrosComuns } from '../../api/leads/contagem';
import { FiltrosDeEmpresas, UFS } from '../../api/leads/filtros';
import { geracaoDosDados, novaGeracaoDosDados } from '../../api/leads/geracao';
import * as database from '../../lib/database';
import { SuiteDeTeste } from '../helpers/suite';
import { acrescentar, Cadastro, contagemGuardada, estabelecimento, Leads, leadsComCadastro } from './apoio-empresas';

/*
 * DESIGN §6 and docs/leads.md: after an import, every combination of uf, situacao_cadastral and
 * matriz_filial is counted in one pass and cached as the count job would cache it, under the
 * month's generation; a listing of such a filter set then waits for no count.
 */

let suite: SuiteDeTeste;
let leads: Leads;
let cadastro: Cadastro;
let master: string;

beforeAll(async () => {
  ({ suite, leads, cadastro, master } = await leadsComCadastro(11));
  // values no filter asks for exactly: a lowercase state (the column compares bytes), an unpadded
  // situation (asked as 02, which `=` never matches with 2), and none at all
  await acrescentar(cadastro, [
    { e: estabelecimento({ uf: 'sp' }) },
    { e: estabelecimento({ uf: 'SP', situacao_cadastral: '2' }) },
    { e: estabelecimento({ uf: null, situacao_cadastral: null, identificador_matriz_filial: null }) },
  ]);
});
afterAll(() => suite.encerrar());
beforeEach(() => novaGeracaoDosDados());

const SITUACOES = ['01', '02', '03', '04', '08'];

/** Every filter set of uf, situacao_cadastral and matriz_filial a listing can ask, each given or not. */
function filtrosComuns(): FiltrosDeEmpresas[] {
  const conjuntos: FiltrosDeEmpresas[] = [];
  for (const uf of [undefined, ...UFS]) {
    for (const situacao_cadastral of [undefined, ...SITUACOES]) {
      for (const matriz_filial of [undefined, '1', '2']) conjuntos.push(JSON.parse(JSON.stringify({ uf, situacao_cadastral, matriz_filial })));
    }
  }
  return conjuntos;
}

test('every filter set of those three the data holds is cached with the count its job would give; one it does not hold, not at all', async () => {
  // a cap some filter sets pass: those are cached as the estimate, as their count job would
  const teto = cadastro.estabelecimentos.filter((e) => e.situacao_cadastral === '02').length - 1;
  const cacheados = await contarFiltrosComuns(teto);
  let comLinhas = 0;
  let estimados = 0;
  for (const filtros of filtrosComuns()) {
    const { contagem } = await contarEmpresas(filtros, teto);
    if (contagem.total === 0) {
      expect({ filtros, guardada: await contagemGuardada(filtros) }).toEqual({ filtros, guardada: null });
      continue;
    }
    comLinhas++;
    if (contagem.estimado) estimados++;
    expect({ filtros, guardada: await contagemGuardada(filtros) }).toEqual({ filtros, guardada: contagem });
  }
  expect(cacheados).toBe(comLinhas);
  // the cases the test means to hold: some capped, and the rows no filter asks for exactly
  expect(estimados).toBeGreaterThan(0);
  expect(await contagemGuardada({})).toEqual({ total: teto, estimado: true });
  expect(await contagemGuardada({ uf: 'SP' })).toEqual({ total: cadastro.estabelecimentos.filter((e) => e.uf === 'SP').length, estimado: false });
});

test('a listing of such a filter set takes its total from them: no count runs', async () => {
  await contarFiltrosComuns();
  const leituras = jest.spyOn(database, 'lerDemorado');
  try {
    const res = await leads.listar(master, { uf: 'sp', situacao_cadastral: '2', matriz_filial: '1' });
    expect(res.status).toBe(200);
    const esperado = cadastro.estabelecimentos.filter((e) => e.uf === 'SP' && e.situacao_cadastral === '02' && e.identificador_matriz_filial === '1');
    expect(res.body).toMatchObject({ total: esperado.length, estimado: false });
    expect(leituras.mock.calls.filter(([, sql]) => sql.includes('COUNT(*)'))).toEqual([]);
  } finally {
    leituras.mockRestore();
  }
});

test("a month's counts are not read for the next: a new generation is counted anew", async () => {
  await contarFiltrosComuns();
  const antes = await contagemGuardada({ uf: 'DF' });
  await acrescentar(cadastro, [{ e: estabelecimento({ uf: 'DF' }) }]);
  await novaGeracaoDosDados();
  expect(await contagemGuardada({ uf: 'DF' })).toBeNull();
  const res = await leads.listar(master, { uf: 'DF' });
  expect(res.body).toMatchObject({ total: antes!.total + 1, estimado: false });
});

test('a month swapped in during the pass: nothing is cached, under either generation', async () => {
  const lerDemorado = database.lerDemorado;
  const antes = await geracaoDosDados();
  // the swap lands while the pass reads: its generation changes under it
  const leitura = jest.spyOn(database, 'lerDemorado').mockImplementationOnce(async (...args) => {
    await novaGeracaoDosDados();
    return lerDemorado(...args);
  });
  try {
    expect(await contarFiltrosComuns()).toBe(0);
  } finally {
    leitura.mockRestore();
  }
  for (const geracao of [antes, await geracaoDosDados()]) expect(await contagemGuardada({}, geracao)).toBeNull();
});
