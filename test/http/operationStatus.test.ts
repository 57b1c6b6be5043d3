import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';
import {
  OPERATION_TABLE_PAGE,
  renderOperationTable,
  withOperationTable,
} from '../../scripts/operationTable.ts';
import { contract } from '../../src/contract.ts';
import { handlers } from '../../src/operations/registry.ts';

/*
 * The operation table of docs/api/operations.md is the public statement of what this version
 * implements. `npm run gen` writes it from the contract and the handler registry; this only checks
 * that it is current.
 */

test('the operation table is what `npm run gen` writes from the contract and the registry', () => {
  const page = readFileSync(new URL(`../../${OPERATION_TABLE_PAGE}`, import.meta.url), 'utf8');
  const table = renderOperationTable(contract.operations, (id) => id in handlers);
  expect(page).toBe(withOperationTable(page, table));
});

test('the table marks an operation implemented exactly when the registry has its handler', () => {
  const operations = [
    { operationId: 'ping', method: 'get', path: '/api/v1/ping' },
    { operationId: 'createUser', method: 'post', path: '/api/v1/users' },
  ] as const;
  expect(renderOperationTable(operations, (id) => id === 'ping').split('\n')).toEqual([
    '| operationId | method and path | status |',
    '|---|---|---|',
    '| `ping` | GET `/api/v1/ping` | implemented |',
    '| `createUser` | POST `/api/v1/users` | not yet |',
  ]);
  expect(
    withOperationTable('a\n<!-- operation-status:start -->\nold\n<!-- operation-status:end -->\nb', 'new'),
  ).toBe('a\n<!-- operation-status:start -->\nnew\n<!-- operation-status:end -->\nb');
  expect(() => withOperationTable('no markers', 'new')).toThrow('markers');
});
