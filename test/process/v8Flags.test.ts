import { describe, expect, test } from '@jest/globals';
import { flagsToTake, WORKER_V8_FLAGS } from '../../src/v8Flags.ts';

/*
 * A process that does the work itself (WORKERS=0, the CLI) takes the workers' V8 settings as it
 * starts, except those its operator gave: what it takes, worked out from its command line.
 */

describe('the worker V8 settings a process takes', () => {
  test('all of them when none is given', () => {
    expect(flagsToTake([], undefined)).toEqual(WORKER_V8_FLAGS);
    expect(flagsToTake(['--enable-source-maps'], '--trace-warnings')).toEqual(WORKER_V8_FLAGS);
  });

  test('a setting given on the command line or in NODE_OPTIONS, with any value, is left to it', () => {
    expect(flagsToTake(['--heap-growing-percent=0'], undefined)).toEqual(
      WORKER_V8_FLAGS.filter((flag) => !flag.startsWith('--heap-growing-percent')),
    );
    expect(flagsToTake([], ' --max-semi-space-size=16  --no-wasm-tier-up')).toEqual([
      '--wasm-lazy-compilation',
      '--heap-growing-percent=30',
    ]);
    expect(flagsToTake([...WORKER_V8_FLAGS], undefined)).toEqual([]);
  });
});
