import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';
import { loadConfig } from '../../src/config.ts';

/*
 * The README's configuration table names every environment variable the service reads, each with
 * a default, and nothing the service does not read: the variables are the ones loadConfig looks
 * up (recorded through a proxy environment), so a variable added to the config schema without a
 * README row fails here.
 */

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Rows of the table under "## Configuration": variable name → default cell. */
function configurationTable(): Map<string, string> {
  const section = README.split(/^## /m).find((part) => part.startsWith('Configuration\n'));
  if (section === undefined) throw new Error('README has no "## Configuration" section');
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
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

test('the README configuration table has exactly the variables the service reads', () => {
  expect([...configurationTable().keys()].sort()).toEqual(variablesReadByLoadConfig());
});

test('every variable of the table states a default', () => {
  const missing = [...configurationTable()].filter(([, fallback]) => fallback === '').map(([name]) => name);
  expect(missing).toEqual([]);
});
