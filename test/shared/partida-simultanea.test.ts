import { ChildProcess } from 'node:child_process';
import { Connection, RowDataPacket } from 'mysql2/promise';
import { resetConfig } from '../../config';
import { NomeDoServico, SERVICOS } from '../../config/services';
import { lerCredenciaisLocais } from '../../lib/credenciais';
import { novaConexao } from '../../lib/database';
import { hashDoSegredo } from '../../api/identity/login';
import { comandoDaSuite, esperarPronto, portaLivre } from '../helpers/processo';
import { limparDados } from '../helpers/suite';

/**
 * Two processes of one service starting together on an empty database (an API scaled to two, or
 * an API and its worker): each seeds what the service needs (the initial master, the signing key,
 * the suite's applications, `Acesso inicial`), and the seeds are made once, not once per process.
 */

// this file's own prefix, set here so the checks below and the clean-up read the children's data
const prefixo = `${process.env.DB_PREFIX}s`;
process.env.DB_PREFIX = prefixo;
process.env.QUEUE_PREFIX = prefixo;
resetConfig();
const filhos: { processo: ChildProcess; saida: string }[] = [];

async function iniciar(servico: NomeDoServico): Promise<string> {
  const porta = await portaLivre();
  const filho = {
    processo: comandoDaSuite(['api', servico], { ...process.env, [`${SERVICOS[servico].env}_PORT`]: String(porta) }),
    saida: '',
  };
  filho.processo.stdout.on('data', (d) => (filho.saida += d));
  filho.processo.stderr.on('data', (d) => (filho.saida += d));
  filhos.push(filho);
  return `http://127.0.0.1:${porta}`;
}

async function contar(conexao: Connection, sql: string): Promise<number> {
  const [[linha]] = await conexao.query<RowDataPacket[]>(sql);
  return Number(linha.n);
}

afterAll(async () => {
  await Promise.all(
    filhos.map(async ({ processo }) => {
      if (processo.exitCode !== null) return;
      const saiu = new Promise((r) => processo.once('exit', r));
      processo.kill('SIGTERM');
      await saiu;
    }),
  );
  await limparDados(['identity', 'intranet']);
});

test('two processes of identity and two of intranet starting together seed the master, the signing key, the suite applications and Acesso inicial once each, and all four start', async () => {
  const urls = await Promise.all([iniciar('identity'), iniciar('identity'), iniciar('intranet'), iniciar('intranet')]);
  await Promise.all(urls.map((url, i) => esperarPronto(url, filhos[i])));

  const identity = await novaConexao('identity');
  const intranet = await novaConexao('intranet');
  try {
    expect(await contar(identity, 'SELECT COUNT(*) AS n FROM usuario')).toBe(1);
    expect(await contar(identity, 'SELECT COUNT(*) AS n FROM chave_de_assinatura')).toBe(1);
    // the credentials kept on disk are the ones identity holds: a process started later reuses them
    const [apps] = await identity.query<RowDataPacket[]>('SELECT id, servico_da_suite, segredo_hash FROM aplicativo WHERE servico_da_suite IS NOT NULL');
    expect(apps.length).toBeGreaterThan(0);
    const guardadas = await lerCredenciaisLocais();
    for (const app of apps) {
      const guardada = guardadas[app.servico_da_suite as NomeDoServico];
      expect(guardada?.clientId).toBe(app.id);
      expect(hashDoSegredo(guardada!.clientSecret)).toBe(app.segredo_hash);
    }
    expect(await contar(intranet, "SELECT COUNT(*) AS n FROM perfil_acesso WHERE nome = 'Acesso inicial'")).toBe(1);
  } finally {
    await identity.end();
    await intranet.end();
  }
}, 120_000);
