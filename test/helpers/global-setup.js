/**
 * One temp folder per `npm test` run: each test file's DATA_DIR is made inside it
 * (test/helpers/setup-env.ts) and test/helpers/global-teardown.js removes it when the run ends.
 * Workers inherit the variable set here, in jest's parent process.
 *
 * The suite is compiled into it too (`compilado/`), for the tests that run a suite command in a
 * process of their own (test/helpers/processo.ts): loading the sources through ts-node took each
 * such process seconds. A fresh build of this run's sources, apart from dist/ (which `npm start`
 * runs and another build may be writing); type errors are the typecheck's to report (`--noCheck`).
 */
const { execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

module.exports = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'suite-testes-'));
  process.env.SUITE_TESTES_DIR = dir;
  const tsc = require.resolve('typescript/bin/tsc');
  const opcoes = ['--noCheck', '--incremental', 'false', '--outDir', path.join(dir, 'compilado')];
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', ...opcoes], { cwd: path.resolve(__dirname, '../..'), stdio: 'inherit' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
};
