import { describe, expect, test } from '@jest/globals';
import { workerEnvironment } from '../../src/supervisor.ts';

/*
 * The malloc settings the supervisor gives its workers (read by glibc as a process starts): two
 * arenas and a fixed threshold above which a block is mapped alone and given back when freed. What
 * the operator sets wins; nothing else of the environment is copied.
 */
describe('a worker’s malloc environment', () => {
  test('the service’s settings when the operator sets none', () => {
    expect(workerEnvironment({ PATH: '/usr/bin' })).toEqual({
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '65536',
    });
  });

  test('an operator’s value is kept, each setting on its own', () => {
    expect(workerEnvironment({ MALLOC_MMAP_THRESHOLD_: '1048576' })).toEqual({
      MALLOC_ARENA_MAX: '2',
      MALLOC_MMAP_THRESHOLD_: '1048576',
    });
    expect(workerEnvironment({ MALLOC_ARENA_MAX: '4' })).toEqual({
      MALLOC_ARENA_MAX: '4',
      MALLOC_MMAP_THRESHOLD_: '65536',
    });
  });
});
