/**
 * One temp folder per `npm test` run: each test file's DATA_DIR is made inside it
 * (test/helpers/setup-env.ts) and test/helpers/global-teardown.js removes it when the run ends.
 * Workers inherit the variable set here, in jest's parent process.
 */
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

module.exports = () => {
  process.env.SUITE_TESTES_DIR = mkdtempSync(path.join(tmpdir(), 'suite-testes-'));
};
