import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, expect, test } from '@jest/globals';
import { WORKER_MALLOC_ENVIRONMENT } from '../../src/supervisor.ts';
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
  return descendantProcesses(pid).map(({ command }) => command);
}

/** Every process below `pid`: its id, command line and environment. */
function descendantProcesses(pid: number): { pid: number; command: string; environment: string[] }[] {
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
    let environment: string[] = [];
    try {
      command = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim();
      environment = readFileSync(`/proc/${child}/environ`, 'utf8').split('\0');
    } catch {
      // It ended meanwhile.
    }
    return [{ pid: child, command, environment }, ...descendantProcesses(child)];
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
  // The serving process (WORKERS=0) runs as the production command does: the young generation's
  // size on node's command line, the workers' malloc settings in its environment (docs/operating/build-and-start.md).
  const serving = descendantProcesses(service.process.pid ?? 0).filter(({ command }) =>
    command.endsWith(COMPILED_ENTRY),
  );
  expect(serving).toHaveLength(1);
  expect(serving[0]?.command).toContain('--max-semi-space-size=4');
  for (const [name, value] of Object.entries(WORKER_MALLOC_ENVIRONMENT)) {
    expect(serving[0]?.environment).toContain(`${name}=${value}`);
  }

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
