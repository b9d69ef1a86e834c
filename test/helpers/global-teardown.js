/** The run's temp folder (test/helpers/global-setup.js) goes when the run ends. */
const { rmSync } = require('node:fs');

module.exports = () => {
  if (process.env.SUITE_TESTES_DIR) rmSync(process.env.SUITE_TESTES_DIR, { recursive: true, force: true });
};
