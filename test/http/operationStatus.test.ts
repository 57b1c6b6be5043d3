import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';
import { contract } from '../../src/http/contract.ts';
import { handlers, missingOperationIds } from '../../src/operations/registry.ts';

/*
 * The README's operation table is the public statement of what this version implements: it must
 * list every operation of the contract, with its method and path, and call an operation
 * "implemented" exactly when the registry has its handler.
 */

function readmeTable(): Map<string, { route: string; status: string }> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section =
    /<!-- operation-status:start -->([\s\S]*?)<!-- operation-status:end -->/.exec(readme)?.[1] ?? '';
  const rows = new Map<string, { route: string; status: string }>();
  for (const line of section.split('\n')) {
    const cells = /^\| `(\w+)` \| (\w+) `([^`]+)` \| ([\w ]+) \|$/.exec(line.trim());
    if (cells) rows.set(cells[1] as string, { route: `${cells[2]} ${cells[3]}`, status: cells[4] as string });
  }
  return rows;
}

test('the README lists every operation of the contract with its true status', () => {
  const table = readmeTable();
  const expected = new Map(
    contract.operations.map((operation) => [
      operation.operationId,
      {
        route: `${operation.method.toUpperCase()} ${operation.path}`,
        status: operation.operationId in handlers ? 'implemented' : 'not yet',
      },
    ]),
  );
  expect(table).toEqual(expected);
});

test('the operations still without a handler are exactly those the README marks "not yet"', () => {
  const notYet = [...readmeTable()].filter(([, row]) => row.status === 'not yet').map(([id]) => id);
  expect(missingOperationIds()).toEqual(notYet);
  expect(notYet).toEqual([
    'listUsers',
    'createUser',
    'loginUser',
    'resetUserPassword',
    'getUserAvatar',
    'listAdministrators',
    'updateAdministrator',
    'resetAdministratorPassword',
    'loginAdministrator',
    'getCaptcha',
    'checkCaptcha',
    'restartSystem',
  ]);
});
