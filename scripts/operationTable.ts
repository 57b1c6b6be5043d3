import type { ContractOperation } from '../src/contract.ts';

/*
 * The operation table of docs/api/operations.md: one row per operation of the contract, in the
 * contract's order, "implemented" exactly when the handler registry has it. `npm run gen` writes it
 * between the markers, `npm run gen:check` and a test fail when the page is not what this produces.
 */

/** The page that holds the table, relative to the project root. */
export const OPERATION_TABLE_PAGE = 'docs/api/operations.md';

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

/** The page with `table` between the markers; throws when the markers are missing or out of order. */
export function withOperationTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(
      `${OPERATION_TABLE_PAGE} must hold the markers ${TABLE_START} and ${TABLE_END}, in that order`,
    );
  }
  return `${page.slice(0, start + TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}
