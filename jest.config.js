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
  // How long jest waits for a worker to exit after the run before it kills it ("failed to exit
  // gracefully"). A worker's exit can outlast jest's default 500 ms on a loaded machine without
  // holding anything (a worker thread ending its statement, the heap of a worker that ran dozens of
  // files); one that holds a handle still reports it (test/support/leakEnvironment.ts).
  workerGracefulExitTimeout: 5000,
  maxWorkers: 2,
};
