/**
 * One temp folder per `npm test` run: each test file's DATA_DIR is made inside it
 * (test/helpers/setup-env.ts) and test/helpers/global-teardown.js removes it when the run ends.
 * Workers inherit the variable set here, in jest's parent process.
 *
 * The suite's compiled code, built into dist/ as `npm run build` builds it, for the tests that run
 * a suite command in a process of its own (test/helpers/processo.ts): loading the sources through
 * ts-node took each such process seconds. Type errors are the typecheck's to report, not this
 * build's (`--noCheck`); an incremental build takes a second or two.
 */
const { execFileSync } = require('node:child_process');
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

module.exports = () => {
  process.env.SUITE_TESTES_DIR = mkdtempSync(path.join(tmpdir(), 'suite-testes-'));
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck'], {
    cwd: path.resolve(__dirname, '../..'),
    stdio: 'inherit',
  });
};
