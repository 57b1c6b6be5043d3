import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';

/*
 * The test environment of every file: node's, plus the secret scan of test/support/leaks.ts once the
 * file has run completely — after its last afterAll hook, so that what apps and processes log while
 * they stop is scanned too. A finding fails the file with a message naming each secret and where it
 * was found. Files that never load the support have nothing to scan.
 */

const LEAK_CHECK = Symbol.for('cms.test.leakCheck');

export default class LeakCheckingEnvironment extends TestEnvironment {
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
