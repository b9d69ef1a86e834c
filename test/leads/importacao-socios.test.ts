import { importarCnpj } from '../../api/leads/importacao';
import { cliente } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { cnpjValido, diretorios, escreverMes, escreverZipsDaReceita, linhaDeEmpresa, linhaDeEstabelecimento, linhaDeSocio, novoCnpj } from './apoio';

/**
 * The Receita publishes its files in parts (ten of about 2.6 million partners, ten of about 6
 * million establishments). A part loading beside another waits on whatever the other holds until
 * it commits, and fails after `innodb_lock_wait_timeout` (50 s, shorter than a real part takes):
 * `socio`'s AUTO_INCREMENT lock (held for a whole LOAD DATA), or a key both parts hold (the
 * Receita repeats some CNPJs across parts). Here the import's connections wait 1 s instead, and
 * each part is large enough to take longer than that to load.
 */
jest.mock('../../lib/database', () => {
  const real = jest.requireActual('../../lib/database');
  return {
    ...real,
    novaConexao: async (...args: unknown[]) => {
      const conexao = await real.novaConexao(...args);
      await conexao.query('SET SESSION innodb_lock_wait_timeout = 1');
      return conexao;
    },
  };
});

const POR_PARTE = 150_000;

let suite: SuiteDeTeste;
const dirs = diretorios();

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'leads'], { workers: false, env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '1000000' } });
});
afterAll(async () => {
  dirs.apagar();
  await suite?.encerrar();
});

test('Socios parts each longer to load than the lock wait load side by side and go live, their partners numbered in file order', async () => {
  const cnpj = novoCnpj();
  const dir = dirs.novo();
  await escreverMes(dir, { estabelecimentos: [linhaDeEstabelecimento({ cnpj })] });
  const parte = (n: number) =>
    Array.from({ length: POR_PARTE }, (_, i) => linhaDeSocio({ cnpj_basico: `${n}${String(i).padStart(7, '0')}`, nome_socio_razao_social: `SOCIO ${n}-${i}` }));
  const daEmpresa = (nome_socio_razao_social: string, qualificacao_socio: string) =>
    linhaDeSocio({ cnpj_basico: cnpj.slice(0, 8), nome_socio_razao_social, qualificacao_socio });
  const primeiraParte = [...parte(1), daEmpresa('MESMO NOME', '49'), daEmpresa('MESMO NOME', '22')];
  const ultimaParte = [daEmpresa('MESMO NOME', '05'), ...parte(2), daEmpresa('ANA', '10')];
  await escreverZipsDaReceita(dir, { Socios0: { linhas: primeiraParte }, Socios1: { linhas: ultimaParte } });

  const r = await importarCnpj(dir);
  expect(r.linhas.socio).toBe(2 * POR_PARTE + 4);
  const res = await cliente(suite.url.leads).get(`/api/cnpj/${cnpj}`);
  // by name, then in file order: the first part's lines, in their order, before the second part's
  expect(res.body.socios.map((s: Record<string, string>) => [s.nome_socio_razao_social, s.qualificacao_socio])).toEqual([
    ['ANA', '10'],
    ['MESMO NOME', '49'],
    ['MESMO NOME', '22'],
    ['MESMO NOME', '05'],
  ]);
});

test('Estabelecimentos and Empresas parts that repeat a key (the Receita repeats some) load one after the other and go live, the first line kept', async () => {
  const repetido = novoCnpj();
  const dir = dirs.novo();
  // cnpj_basico by part and line: 8 digits, unique, not the repeated one's (which starts with 9)
  const cnpjDe = (n: number, i: number) => cnpjValido(`${n}${String(i).padStart(7, '0')}0001`);
  const parte = (n: number) => Array.from({ length: POR_PARTE }, (_, i) => linhaDeEstabelecimento({ cnpj: cnpjDe(n, i) }));
  const empresas = (n: number) => Array.from({ length: 1000 }, (_, i) => linhaDeEmpresa({ cnpj_basico: `${n}${String(i).padStart(7, '0')}` }));
  await escreverZipsDaReceita(dir, {
    Estabelecimentos0: { linhas: [linhaDeEstabelecimento({ cnpj: repetido, nome_fantasia: 'PRIMEIRA' }), ...parte(1)] },
    // first in both: side by side, the second part would wait for the whole of the first at once
    Estabelecimentos1: { linhas: [linhaDeEstabelecimento({ cnpj: repetido, nome_fantasia: 'SEGUNDA' }), ...parte(2)] },
    Empresas0: { linhas: [linhaDeEmpresa({ cnpj_basico: repetido.slice(0, 8), razao_social: 'PRIMEIRA LTDA' }), ...empresas(1)] },
    Empresas1: { linhas: [linhaDeEmpresa({ cnpj_basico: repetido.slice(0, 8), razao_social: 'SEGUNDA LTDA' }), ...empresas(2)] },
  });

  const r = await importarCnpj(dir);
  expect(r.linhas.estabelecimento).toBe(2 * POR_PARTE + 1);
  expect(r.linhas.empresa).toBe(2 * 1000 + 1);
  const res = await cliente(suite.url.leads).get(`/api/cnpj/${repetido}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ nome_fantasia: 'PRIMEIRA', empresa_razao_social: 'PRIMEIRA LTDA' });
  expect((await cliente(suite.url.leads).get(`/api/cnpj/${cnpjDe(2, POR_PARTE - 1)}`)).status).toBe(200);
});
