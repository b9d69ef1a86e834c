/**
 * One temp folder per `npm test` run: each test file's DATA_DIR is made inside it
 * (test/helpers/setup-env.ts), and the whole folder goes when the run ends. Workers inherit the
 * variable set here, in jest's parent process.
 */
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

module.exports = {
  criar() {
    process.env.SUITE_TESTES_DIR = mkdtempSync(path.join(tmpdir(), 'suite-testes-'));
  },
  apagar() {
    if (process.env.SUITE_TESTES_DIR) rmSync(process.env.SUITE_TESTES_DIR, { recursive: true, force: true });
  },
};
