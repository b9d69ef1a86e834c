import { abrirBanco, apagarBanco, migrar, Migracao, nomeDoBanco, novaConexao } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { esperarOutraConexao } from '../helpers/espera';

/**
 * A shutdown that comes while a migration runs (a deploy during a first start, a long index
 * build) lets that migration end and be recorded, and starts no other: closing the database under
 * it would leave it applied and unrecorded, and every later start would fail on it.
 */
test('a shutdown during a migration waits for it and its record, then stops before the next', async () => {
  await abrirBanco('intranet', []);
  let comecou!: () => void;
  const comecada = new Promise<void>((r) => (comecou = r));
  let liberar!: () => void;
  const liberada = new Promise<void>((r) => (liberar = r));
  const migracoes: Migracao[] = [
    {
      name: '0001-longa',
      async up(qi) {
        comecou();
        await liberada;
        await qi.sequelize.query('CREATE TABLE primeira (id INT PRIMARY KEY) ENGINE=InnoDB');
      },
    },
    {
      name: '0002-seguinte',
      async up(qi) {
        await qi.sequelize.query('CREATE TABLE segunda (id INT PRIMARY KEY) ENGINE=InnoDB');
      },
    },
  ];
  const migracao = migrar('intranet', migracoes).then(
    () => 'terminou',
    (err: Error) => err.message,
  );
  await comecada;
  const encerramento = encerrar();
  // the shutdown has begun and reached the databases' stage while the migration still runs
  await new Promise((r) => setTimeout(r, 300));
  liberar();
  await encerramento;
  expect(await migracao).toMatch(/stopped by the shutdown before 0002-seguinte/);

  const conexao = await novaConexao('intranet');
  try {
    const [registradas] = await conexao.query('SELECT name FROM schema_migracoes ORDER BY name');
    expect((registradas as { name: string }[]).map((r) => r.name)).toEqual(['0001-longa']);
    const [tabelas] = await conexao.query(`SELECT table_name AS nome FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('primeira', 'segunda')`);
    expect((tabelas as { nome: string }[]).map((t) => t.nome)).toEqual(['primeira']);
  } finally {
    await conexao.end();
    await apagarBanco('intranet');
  }
});

test('a migration whose change is there already (made by a process killed before its record) fails saying so and how to record it', async () => {
  const sequelize = await abrirBanco('intranet', []);
  try {
    // as a process killed after the server made the table, before the record
    await sequelize.query('CREATE TABLE ja_feita (id INT PRIMARY KEY) ENGINE=InnoDB');
    const migracoes: Migracao[] = [
      {
        name: '0001-ja-feita',
        async up(qi) {
          await qi.sequelize.query('CREATE TABLE ja_feita (id INT PRIMARY KEY) ENGINE=InnoDB');
        },
      },
    ];
    const erro = (await migrar('intranet', migracoes).catch((e: unknown) => e)) as Error;
    expect(erro.message).toContain('Migration 0001-ja-feita (up) failed');
    expect(erro.message).toContain(`INSERT INTO ${sequelize.config.database}.schema_migracoes (name) VALUES ('0001-ja-feita')`);
    // an error of another kind is left as it is
    const outra: Migracao[] = [{ name: '0002-quebrada', up: async (qi) => void (await qi.sequelize.query('SELECT * FROM tabela_que_nao_existe')) }];
    const erroComum = (await migrar('intranet', outra).catch((e: unknown) => e)) as Error;
    expect(erroComum.message).toMatch(/^Migration 0002-quebrada \(up\) failed/);
    expect(erroComum.message).not.toContain('schema_migracoes');
  } finally {
    await encerrar();
    await apagarBanco('intranet');
  }
});

test('a shutdown while waiting for another process that migrates ends the wait at once, and the process closes', async () => {
  await abrirBanco('intranet', []);
  const outro = await novaConexao('intranet');
  try {
    // another process migrating this service, for as long as it takes
    await outro.query('SELECT GET_LOCK(?, 0)', [`migracao_${nomeDoBanco('intranet')}`.slice(0, 64)]);
    const migracao = migrar('intranet', [{ name: '0001-qualquer', up: async () => undefined }]).then(
      () => 'terminou',
      (err: Error) => err.message,
    );
    await esperarOutraConexao(outro, 'the migration waiting for the lock', ['SELECT GET_LOCK%']);
    const inicio = Date.now();
    const fechou = await Promise.race([encerrar().then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
    expect(fechou).toBe(true);
    expect(Date.now() - inicio).toBeLessThan(3000);
    expect(await migracao).toMatch(/^the shutdown stopped the wait for migration lock migracao_/);
  } finally {
    await outro.end();
    await apagarBanco('intranet');
  }
});
