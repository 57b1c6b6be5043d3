/**
 * A function that makes one object literal of these properties from its input: every object it
 * makes has one shape from the first on, and each value is read by its own expression. Filling an
 * empty object name by name instead goes through a keyed store and a call through a shared site
 * per value, the cost of a page of rows (bench/RUNTIME.md). `expression(index)` is the JavaScript
 * expression of property `index`, over `input` and the caller's `parts`; the names are quoted as
 * JSON strings (`__proto__`, which a literal would take for the prototype, is refused). Only the
 * service's own code may give expressions.
 */
export function objectMaker<I, O>(
  names: readonly string[],
  expression: (index: number) => string,
  parts: readonly unknown[] = [],
): (input: I) => O {
  if (names.includes('__proto__'))
    throw new Error('objectMaker: __proto__ cannot be a property of a literal');
  const properties = names.map((name, index) => `${JSON.stringify(name)}: ${expression(index)}`);
  const make = new Function('parts', `return (input) => ({ ${properties.join(', ')} });`);
  return make(parts) as (input: I) => O;
}
