import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { CONTRACT_FILE, type Contract, loadContract, writeContractCache } from '../../src/contract.ts';
import { scratchPrefix } from '../support/run.ts';

/*
 * `npm run build` writes the parsed and resolved contract next to the compiled code, and the
 * service reads it instead of parsing the YAML (src/contract.ts). What it reads must be what the
 * YAML says: the same contract as a fresh parse, never a cache made from another text.
 */

const dir = mkdtempSync(scratchPrefix('contract-cache'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the rest of the service reads of a contract (the file name aside). */
function comparable(contract: Contract) {
  return {
    document: contract.document,
    resolved: contract.resolved,
    operations: contract.operations,
    byId: [...contract.byId.keys()],
  };
}

type Node = Record<string, unknown>;
const at = (value: unknown, ...path: string[]): Node =>
  path.reduce((node, key) => (node as Node)[key], value) as Node;

describe('the contract cache', () => {
  test('holds exactly the contract a parse of the YAML gives, its shared parts still shared', async () => {
    const cacheFile = join(dir, 'cms.contract.bin');
    await writeContractCache(CONTRACT_FILE, cacheFile);
    const parsed = await loadContract(CONTRACT_FILE, null);
    const cached = await loadContract(CONTRACT_FILE, cacheFile);
    expect([parsed.fromCache, cached.fromCache]).toEqual([false, true]);
    expect(comparable(cached)).toEqual(comparable(parsed));
    expect(cached.operations.length).toBeGreaterThan(30);
    // A parameter written as a $ref is, resolved, the component itself (one object, not a copy).
    const item = at(cached.document, 'paths', '/api/v1/contents/{siteId}/{channelId}/{id}');
    const written = (at(item, 'parameters') as unknown as Node[])[0];
    expect(written).toEqual({ $ref: '#/components/parameters/SiteId' });
    const resolved = (
      at(
        cached.resolved,
        'paths',
        '/api/v1/contents/{siteId}/{channelId}/{id}',
        'parameters',
      ) as unknown as Node[]
    )[0];
    expect(resolved).toBe(at(cached.resolved, 'components', 'parameters', 'SiteId'));
    expect(resolved?.name).toBe('siteId');
  });

  test('is not used for another text of the contract', async () => {
    const cacheFile = join(dir, 'stale.bin');
    await writeContractCache(CONTRACT_FILE, cacheFile);
    const changed = join(dir, 'changed.yaml');
    const text = readFileSync(CONTRACT_FILE, 'utf8');
    expect(text).toContain('title: CMS REST service');
    writeFileSync(changed, text.replace('title: CMS REST service', 'title: Changed service'));
    const contract = await loadContract(changed, cacheFile);
    expect(contract.fromCache).toBe(false);
    expect(at(contract.document, 'info').title).toBe('Changed service');
    expect(at(contract.resolved, 'info').title).toBe('Changed service');
  });

  test('an unreadable cache file is ignored', async () => {
    const cacheFile = join(dir, 'garbage.bin');
    writeFileSync(cacheFile, 'not a serialised contract');
    const contract = await loadContract(CONTRACT_FILE, cacheFile);
    expect(contract.fromCache).toBe(false);
    expect(at(contract.document, 'info').title).toBe('CMS REST service');
    const missing = await loadContract(CONTRACT_FILE, join(dir, 'absent.bin'));
    expect(missing.operations.map((operation) => operation.operationId)).toEqual(
      contract.operations.map((operation) => operation.operationId),
    );
  });
});
