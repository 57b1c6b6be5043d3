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
  // Tests that start processes (the CLI, servers) take many times longer on a loaded 2-core machine;
  // a generous ceiling keeps them from failing for load, while a real hang still ends the run.
  testTimeout: 180000,
  maxWorkers: 2,
};
