/** Jest runs in ESM mode: Prisma 7's generated client loads its query compiler with import(). */
export default {
  // node's, plus the run-wide secret scan of test/support/leaks.ts after each file.
  testEnvironment: '<rootDir>/test/support/leakEnvironment.ts',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
        module: { type: 'es6' },
      },
    ],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // Every run names what it makes after a run id and removes all of it at the end, pass or fail.
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
