import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, expect, test } from '@jest/globals';
import { createEmptyDatabase, type EmptyDatabase } from '../support/database.ts';
import { COMPILED_ENTRY, freePort, type Service, startService, stopService } from './processes.ts';

/*
 * `npm start` is the production start: compiled JavaScript from dist/, no TypeScript loader, and
 * the files read at run time (the contract, the migrations) found from there. The other process
 * tests start dist/src/main.js directly; this one goes through npm itself.
 */

const ROOT = new URL('../..', import.meta.url);

let service: Service | undefined;
let database: EmptyDatabase | undefined;

afterEach(async () => {
  await stopService(service);
  await database?.drop();
});

/** Command lines of every process below `pid`. */
function descendants(pid: number): string[] {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)])
      .toString()
      .split('\n')
      .filter((line) => line !== '')
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => {
    let command = '';
    try {
      command = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      // It ended meanwhile.
    }
    return [command, ...descendants(child)];
  });
}

test('npm start runs the compiled service: it migrates an empty database, serves the contract and answers', async () => {
  database = await createEmptyDatabase();
  const port = await freePort();
  service = startService({ DATABASE_URL: database.url, PORT: String(port), WORKERS: '0' }, 'npm');
  await service.waitFor(/"msg":"listening"/, 60_000);
  const output = service.output();
  expect(output).toMatch(/applied \d+ migration\(s\)/);

  const commands = descendants(service.process.pid ?? 0);
  expect(commands.some((command) => command.endsWith(COMPILED_ENTRY))).toBe(true);
  expect(commands.filter((command) => /tsx|\.ts\b/.test(command))).toEqual([]);

  const ping = await fetch(`http://127.0.0.1:${port}/api/v1/ping`);
  expect(ping.status).toBe(200);
  expect(await ping.text()).toBe('pong');
  const yaml = await fetch(`http://127.0.0.1:${port}/openapi.yaml`);
  expect(await yaml.text()).toBe(readFileSync(new URL('openapi/cms.yaml', ROOT), 'utf8'));
  const refused = await fetch(`http://127.0.0.1:${port}/api/v1/contents`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ siteId: 1 }),
  });
  expect(refused.status).toBe(401);
  expect(refused.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
});
