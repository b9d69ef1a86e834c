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

test('Socios parts each longer to load than the lock wait all load, one after another, and go live', async () => {
  const cnpj = novoCnpj();
  const dir = dirs.novo();
  await escreverMes(dir, { estabelecimentos: [linhaDeEstabelecimento({ cnpj })] });
  const parte = (n: number) =>
    Array.from({ length: POR_PARTE }, (_, i) => linhaDeSocio({ cnpj_basico: `${n}${String(i).padStart(7, '0')}`, nome_socio_razao_social: `SOCIO ${n}-${i}` }));
  const ultimaParte = parte(2);
  ultimaParte.push(linhaDeSocio({ cnpj_basico: cnpj.slice(0, 8), nome_socio_razao_social: 'SOCIA DA ULTIMA PARTE' }));
  await escreverZipsDaReceita(dir, { Socios0: { linhas: parte(1) }, Socios1: { linhas: ultimaParte } });

  const r = await importarCnpj(dir);
  expect(r.linhas.socio).toBe(2 * POR_PARTE + 1);
  const res = await cliente(suite.url.leads).get(`/api/cnpj/${cnpj}`);
  expect(res.body.socios.map((s: { nome_socio_razao_social: string }) => s.nome_socio_razao_social)).toEqual(['SOCIA DA ULTIMA PARTE']);
});
