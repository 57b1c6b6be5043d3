import { expect, test } from '@jest/globals';
import { nextStep } from '../../src/domain/longWork.ts';

/*
 * The steps of long work take turns of the event loop together (src/domain/longWork.ts): one step
 * per turn for all of them, so that other work between turns waits one step, not one per request.
 */

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('three long works make one step per turn between them, in turn, and other work runs between steps', async () => {
  const events: string[] = [];
  const work = async (name: string, steps: number) => {
    for (let step = 0; step < steps; step++) {
      await nextStep();
      events.push(name);
    }
  };
  // Other work: one entry per turn of the loop while the long work runs.
  let running = true;
  const other = (async () => {
    while (running) {
      await turn();
      events.push('-');
    }
  })();
  await Promise.all([work('a', 3), work('b', 3), work('c', 3)]);
  running = false;
  await other;
  const steps = events.filter((event) => event !== '-');
  expect(steps.join('')).toBe('abcabcabc');
  // Never two steps in one turn: between any two steps, the other work had its turn.
  const trimmed = events.join('').replace(/-+$/, '');
  expect(trimmed).not.toMatch(/[abc][abc]/);
});

test('a step requested alone is taken at the next turn', async () => {
  const order: string[] = [];
  const step = nextStep().then(() => order.push('step'));
  order.push('asked');
  await step;
  expect(order).toEqual(['asked', 'step']);
});
