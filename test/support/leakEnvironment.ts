import { writeFileSync } from 'node:fs';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';
import { openHandlesReport, openHandlesReportFile } from './openHandles.ts';

/*
 * The test environment of every file: node's, plus the secret scan of test/support/leaks.ts once the
 * file has run completely — after its last afterAll hook, so that what apps and processes log while
 * they stop is scanned too. A finding fails the file with a message naming each secret and where it
 * was found. Files that never load the support have nothing to scan.
 */

const LEAK_CHECK = Symbol.for('cms.test.leakCheck');
const FILES_RUN = Symbol.for('cms.test.filesRun');
/** The resources of a worker's standard streams: a pipe to jest, or a terminal. */
const STDIO = new Set(['PipeWrap', 'TTYWrap']);

/**
 * The files this jest worker process has run, kept across its environments. Jest ends a worker that
 * does not exit by itself `workerGracefulExitTimeout` after the run with SIGTERM ("A worker process
 * has failed to exit gracefully"). A worker that holds nothing but its standard streams then exits at once; one
 * that still holds something (a leak) writes what and which files it ran to a file the global
 * teardown prints, instead of dying without a word.
 */
function filesRunByThisWorker(graceMs: number): string[] {
  const holder = process as unknown as Record<symbol, string[] | undefined>;
  let files = holder[FILES_RUN];
  if (files === undefined) {
    files = [];
    holder[FILES_RUN] = files;
    const worker = typeof process.send === 'function';
    if (worker) {
      const list = files;
      const report = () => {
        const file = openHandlesReportFile(process.pid);
        writeFileSync(file, `jest worker ${process.pid}: ${process.getActiveResourcesInfo().join(', ')}\n`);
        writeFileSync(file, openHandlesReport(list));
      };
      process.once('SIGTERM', () => {
        try {
          report();
        } finally {
          process.exit(143);
        }
      });
      // Jest ends a worker by removing its (last) message listener and waiting for the process to
      // exit. With nothing but the standard streams left the worker would exit by itself, but
      // tearing down a heap of a gigabyte (a worker that ran dozens of files) takes longer than
      // jest waits (strace: hundreds of munmap calls after 'exit'); process.exit skips that
      // teardown. One that holds more reports it shortly before jest's signal.
      process.on('removeListener', (event) => {
        if (event !== 'message' || process.listenerCount('message') > 0) return;
        const held = process.getActiveResourcesInfo().filter((type) => !STDIO.has(type));
        if (held.length === 0) setImmediate(() => process.exit(0));
        else setTimeout(report, Math.max(0, graceMs - 50)).unref();
      });
    }
  }
  return files;
}

export default class LeakCheckingEnvironment extends TestEnvironment {
  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    filesRunByThisWorker(config.globalConfig.workerGracefulExitTimeout ?? 500).push(context.testPath);
  }

  async handleTestEvent(event: Circus.Event, state: Circus.State): Promise<void> {
    if (event.name !== 'run_finish') return;
    const check = (this.global as unknown as Record<symbol, unknown>)[LEAK_CHECK];
    if (typeof check !== 'function') return;
    const report: unknown = await check();
    if (typeof report !== 'string') return;
    const error = new Error(report);
    // The message is the finding; the environment's own frames would only hide it.
    error.stack = report;
    state.unhandledErrors.push(error);
  }
}
