import { expect, test } from '@jest/globals';
import { objectMaker } from '../../src/objectLiterals.ts';

test('an object maker makes the named properties in order, each from its own expression and parts', () => {
  const double = (n: number) => n * 2;
  const make = objectMaker<unknown[], Record<string, unknown>>(
    ['first', 'twice', 'second'],
    (index) => (index === 1 ? `parts[1](input[0])` : `input[${index === 0 ? 0 : 1}]`),
    [undefined, (n: unknown) => double(n as number)],
  );
  const made = make([3, 'x']);
  expect(made).toEqual({ first: 3, twice: 6, second: 'x' });
  expect(Object.keys(made)).toEqual(['first', 'twice', 'second']);
  // Each call makes a new object.
  expect(make([1, 2])).not.toBe(make([1, 2]));
  expect(make([1, 2])).toEqual({ first: 1, twice: 2, second: 2 });
});

test('any name is a plain property: quotes, code and odd characters are only text', () => {
  const names = ['a"b', "'); throw new Error('x'); ('", '}\n{', 'constructor', '', '0'];
  const make = objectMaker<unknown[], Record<string, unknown>>(names, (index) => `input[${index}]`);
  const made = make(names.map((_, index) => index));
  expect(Object.entries(made).sort()).toEqual(names.map((name, index) => [name, index]).sort());
  expect(Object.getPrototypeOf(made)).toBe(Object.prototype);
});

test('__proto__, which a literal would take for the prototype, is refused', () => {
  expect(() => objectMaker(['id', '__proto__'], (index) => `input[${index}]`)).toThrow('__proto__');
});
