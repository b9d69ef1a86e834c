import { importarCnpj } from '../../api/leads/importacao';
import { cliente } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { diretorios, escreverMes, escreverZipsDaReceita, linhaDeEstabelecimento, linhaDeSocio, novoCnpj } from './apoio';

/**
 * The Receita publishes its partners in ten parts of about 2.6 million rows. `socio` has an
 * AUTO_INCREMENT id, and InnoDB holds a table's AUTO-INC lock for the whole of a LOAD DATA: a part
 * loading beside another waits for it, and fails after `innodb_lock_wait_timeout` (50 s, longer
 * than a real part takes). Here the import's connections wait 1 s instead, and each part is large
 * enough to take longer than that to load.
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
