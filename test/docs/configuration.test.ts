import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';
import { loadConfig } from '../../src/config.ts';

/*
 * The configuration table of docs/operating/configuration.md names every environment variable the
 * service reads, each with a default, and nothing the service does not read: the variables are the ones loadConfig looks
 * up (recorded through a proxy environment), so a variable added to the config schema without a
 * row there fails here.
 */

const PAGE = readFileSync(new URL('../../docs/operating/configuration.md', import.meta.url), 'utf8');
const HEADER = '| variable | default | meaning |';

/** Rows of the page's table headed `HEADER`: variable name → default cell. */
function configurationTable(): Map<string, string> {
  const lines = PAGE.split('\n');
  const start = lines.indexOf(HEADER);
  if (start < 0) throw new Error(`docs/operating/configuration.md has no table headed ${HEADER}`);
  const rows = new Map<string, string>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[1] ?? '')?.[1];
    if (name !== undefined) rows.set(name, cells[2] ?? '');
  }
  return rows;
}

function variablesReadByLoadConfig(): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return Reflect.get(target, name);
    },
  });
  loadConfig(env);
  return [...read].sort();
}

test('loadConfig reads the variables one by one (so the proxy sees them all)', () => {
  const read = variablesReadByLoadConfig();
  expect(read).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'CMS_SECRET', 'REDIS_URL']));
  expect(read.length).toBeGreaterThan(10);
});

test('the configuration table has exactly the variables the service reads', () => {
  expect([...configurationTable().keys()].sort()).toEqual(variablesReadByLoadConfig());
});

test('every variable of the table states a default', () => {
  const missing = [...configurationTable()].filter(([, fallback]) => fallback === '').map(([name]) => name);
  expect(missing).toEqual([]);
});
