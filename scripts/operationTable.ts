import type { ContractOperation } from '../src/contract.ts';

/*
 * The README's "Operation status" table: one row per operation of the contract, in the contract's
 * order, "implemented" exactly when the handler registry has it. `npm run gen` writes it between
 * the markers, `npm run gen:check` and a test fail when the README is not what this produces.
 */

export const TABLE_START = '<!-- operation-status:start -->';
export const TABLE_END = '<!-- operation-status:end -->';

export function renderOperationTable(
  operations: readonly Pick<ContractOperation, 'operationId' | 'method' | 'path'>[],
  implemented: (operationId: string) => boolean,
): string {
  const rows = operations.map(
    ({ operationId, method, path }) =>
      `| \`${operationId}\` | ${method.toUpperCase()} \`${path}\` | ${implemented(operationId) ? 'implemented' : 'not yet'} |`,
  );
  return ['| operationId | method and path | status |', '|---|---|---|', ...rows].join('\n');
}

/** The README with `table` between the markers; throws when the markers are missing or out of order. */
export function withOperationTable(readme: string, table: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`README.md must hold the markers ${TABLE_START} and ${TABLE_END}, in that order`);
  }
  return `${readme.slice(0, start + TABLE_START.length)}\n${table}\n${readme.slice(end)}`;
}
