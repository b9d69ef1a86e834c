/** Tests run against the real MariaDB/MySQL and Redis (scripts/ensure-services.sh starts them). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // jose 6 ships ES modules only
    '^.+\\.js$': '<rootDir>/test/helpers/transformar-esm.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  globalSetup: '<rootDir>/test/helpers/global-setup.js',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
  setupFiles: ['<rootDir>/test/helpers/setup-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/helpers/setup-nock.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
