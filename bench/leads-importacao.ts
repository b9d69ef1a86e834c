/**
 * `npm run bench:leads-importacao`: import of BENCH_ESTABELECIMENTOS (1,000,000) synthetic
 * establishments with their companies, partners and Simples, in the Receita's exact layout, as an
 * operator runs it (`suite import-cnpj <dir>`, compiled, in a child process). Prints establishment
 * rows/s end to end (command start to exit), all rows/s and the importer's peak RSS.
 * Goal: >= 100,000 establishment rows/s and RSS < 512 MB.
 *
 * Environment: BENCH_ESTABELECIMENTOS, BENCH_RECEITA_DIR (reuse files), BENCH_VEZES (imports in a
 * row on the same database, 1; the second shows a re-import over existing data), BENCH_MANTER=1
 * (keep the database), MYSQL_URL, REDIS_URL.
 */
import { rmSync } from 'node:fs';
import os from 'node:os';
import { compilarParaBench, inteiro } from './comum';
import { arquivosDoBench, ESTABELECIMENTOS, f0, fms, importar, limparAmbiente, novoAmbiente } from './leads-comum';

const META_LINHAS_POR_S = 100_000;
const META_RSS_MB = 512;

async function main() {
  const arquivos = await arquivosDoBench();
  const c = compilarParaBench(['suite.ts']);
  const a = novoAmbiente(c);
  let ok = true;
  try {
    for (let vez = 1; vez <= inteiro('BENCH_VEZES', 1); vez++) {
      console.log(`\nimport ${vez}: ${f0(arquivos.estabelecimentos)} establishments, ${f0(arquivos.empresas)} companies, ` +
        `${f0(arquivos.socios)} partners, ${f0(arquivos.simples)} Simples rows`);
      const r = await importar(c, a, arquivos.dir);
      const todas = Object.values(r.linhas).reduce((s, n) => s + n, 0);
      const porS = (r.linhas.estabelecimento ?? 0) / r.segundos;
      const metaLinhas = porS >= META_LINHAS_POR_S;
      const metaRss = r.rssPicoMb < META_RSS_MB;
      ok &&= metaLinhas && metaRss && r.linhas.estabelecimento === arquivos.estabelecimentos;
      console.log(`  rows loaded: ${Object.entries(r.linhas).map(([t, n]) => `${t} ${f0(n)}`).join(', ')}`);
      console.log(`  ${fms(r.segundos)} s end to end: ${f0(porS)} establishment rows/s, ${f0(todas / r.segundos)} rows/s of all tables`);
      console.log(`  importer peak RSS ${f0(r.rssPicoMb)} MB`);
      const s = (x?: number) => (x === undefined ? '-' : `${x.toFixed(1)} s`);
      console.log(`  CPU: importer ${s(r.cpu.importador)}, database ${s(r.cpu.banco)}, whole machine ${s(r.cpu.maquina)} ` +
        `(${f0(os.availableParallelism())} cores × ${fms(r.segundos)} s = ${fms(os.availableParallelism() * r.segundos)} s)`);
      console.log(`  goal: ${metaLinhas ? 'MET' : 'NOT MET'} (>= ${f0(META_LINHAS_POR_S)} establishment rows/s), ` +
        `${metaRss ? 'MET' : 'NOT MET'} (RSS < ${META_RSS_MB} MB)`);
      if (r.linhas.estabelecimento !== arquivos.estabelecimentos) console.log(`  INVALID: expected ${f0(ESTABELECIMENTOS)} establishments`);
    }
  } finally {
    await limparAmbiente(a);
    rmSync(c.dir, { recursive: true, force: true });
  }
  console.log(ok ? '\nGoals met.' : '\nGoals NOT met.');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
