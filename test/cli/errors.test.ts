import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { createDb } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate/index.ts';
import { leaks } from '../support/leaks.ts';
import { scratchPrefix } from '../support/run.ts';

/*
 * Start-up and command-line errors as an operator meets them (issue 16 §6,
 * docs/operating/errors.md): each is one sentence on stderr, with its exit status, and never a
 * stack trace or a database password.
 */

const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const PASSWORD = 'hunter2-not-printed';
/** Nothing listens on port 1. */
const UNREACHABLE = `postgresql://postgres:${PASSWORD}@127.0.0.1:1/cms`;
const MASKED = 'postgresql://postgres:***@127.0.0.1:1/cms';
/** A command that needs the database. */
const CREATE_KEY = ['apikey', 'create', '--title', 't', '--scopes', 'all'];

interface Run {
  code: number;
  stderr: string;
  stdout: string;
}

function run(script: string, args: string[], env: Record<string, string>, stdin = ''): Promise<Run> {
  let output = '';
  leaks.watchProcess(`${script} ${args.join(' ')}`.slice(0, 80), () => output);
  return new Promise((resolve) => {
    const child = execFile(
      TSX,
      [script, ...args],
      { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error', ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        output = `${stdout}\n${stderr}`;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(stdin);
  });
}

const cms = (env: Record<string, string>, args: string[], stdin = '') =>
  run('src/cli/main.ts', args, env, stdin);
const start = (env: Record<string, string>) =>
  run('src/main.ts', [], { WORKERS: '0', PORT: '39107', ...env });

/** One line of text, with no stack frame in it. */
function oneSentence(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0] ?? '';
}

describe('a database that cannot be reached', () => {
  test('cms: one sentence naming DATABASE_URL with the password masked; exit 1', async () => {
    const { code, stderr } = await cms({ DATABASE_URL: UNREACHABLE }, CREATE_KEY);
    expect(code).toBe(1);
    expect(oneSentence(stderr)).toBe(
      `cms apikey: cannot reach the database at ${MASKED} (DATABASE_URL): connection refused`,
    );
    expect(stderr).not.toContain(PASSWORD);
  });

  test('npm start: the same sentence; exit 1', async () => {
    const { code, stderr } = await start({ DATABASE_URL: UNREACHABLE });
    expect(code).toBe(1);
    expect(oneSentence(stderr)).toBe(
      `Could not start: cannot reach the database at ${MASKED} (DATABASE_URL): connection refused`,
    );
    expect(stderr).not.toContain(PASSWORD);
  });
});

const postgresUrl = process.env.TEST_DATABASE_URL?.startsWith('postgres')
  ? process.env.TEST_DATABASE_URL
  : undefined;

(postgresUrl ? describe : describe.skip)('a mistyped PostgreSQL database name', () => {
  test('cms refuses it and creates nothing: "database X does not exist (DATABASE_URL)"; exit 1', async () => {
    const server = new URL(postgresUrl ?? '');
    const name = `cms_typo_${process.pid}`;
    server.pathname = `/${name}`;
    const { code, stderr } = await cms({ DATABASE_URL: server.toString() }, CREATE_KEY);
    expect(code).toBe(1);
    expect(oneSentence(stderr)).toBe(`cms apikey: database '${name}' does not exist (DATABASE_URL)`);
    const served = await start({ DATABASE_URL: server.toString() });
    expect(served.code).toBe(1);
    expect(oneSentence(served.stderr)).toBe(
      `Could not start: database '${name}' does not exist (DATABASE_URL); create it, or set CREATE_DATABASE=true to have it created`,
    );
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      expect(rows).toHaveLength(0);
    } finally {
      await client.end();
    }
  });
});

describe('a database that does not exist is never created unless asked', () => {
  test('cms on a SQLite file that is not there: one sentence, exit 1, nothing created', async () => {
    const dir = await mkdtemp(scratchPrefix('cli-nofile'));
    try {
      const file = join(dir, 'typo', 'cms.db');
      const { code, stderr } = await cms({ DATABASE_URL: `file:${file}` }, CREATE_KEY);
      expect(code).toBe(1);
      expect(oneSentence(stderr)).toBe(`cms apikey: database file ${file} does not exist (DATABASE_URL)`);
      expect(existsSync(join(dir, 'typo'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('npm start on a database that is not there: says how to have it created; exit 1', async () => {
    const dir = await mkdtemp(scratchPrefix('cli-nofile'));
    try {
      const file = join(dir, 'typo', 'cms.db');
      const { code, stderr } = await start({ DATABASE_URL: `file:${file}` });
      expect(code).toBe(1);
      expect(oneSentence(stderr)).toBe(
        `Could not start: database file ${file} does not exist (DATABASE_URL); create it, or set CREATE_DATABASE=true to have it created`,
      );
      expect(existsSync(join(dir, 'typo'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the command line and the environment', () => {
  test('an unknown option names the known ones and the closest; exit 2', async () => {
    const { code, stderr } = await cms({ DATABASE_URL: UNREACHABLE }, [
      'apikey',
      'create',
      '--titel',
      't',
      '--scopes',
      'all',
    ]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')[0]).toBe(
      "cms apikey: unknown option '--titel'; did you mean --title? Options: --title, --scopes, --expires.",
    );
    const other = await cms({ DATABASE_URL: UNREACHABLE }, ['export', '--verbose']);
    expect(other.code).toBe(2);
    expect(other.stderr.trim().split('\n')[0]).toBe(
      "cms export: unknown option '--verbose'. This command takes no options.",
    );
  });

  test.each([['prod'], ['dev'], ['Production']])(
    'NODE_ENV=%s is refused by cms (exit 2) and npm start (exit 1)',
    async (value) => {
      const message = `NODE_ENV must be one of production, development, test (got '${value}')`;
      const cli = await cms({ NODE_ENV: value, DATABASE_URL: UNREACHABLE }, CREATE_KEY);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toContain(message);
      const server = await start({ NODE_ENV: value, DATABASE_URL: UNREACHABLE });
      expect(server.code).toBe(1);
      expect(server.stderr).toContain(message);
      expect(server.stderr).not.toMatch(/\n\s+at /);
    },
  );
});

describe('a port that is taken', () => {
  for (const workers of ['0', '2']) {
    test(`npm start with WORKERS=${workers}: "port N is already in use; set PORT", once; exit 1`, async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
      const port = (taken.address() as AddressInfo).port;
      const dir = await mkdtemp(scratchPrefix('cli-port'));
      try {
        const { code, stderr } = await start({
          DATABASE_URL: `file:${join(dir, 'new', 'cms.db')}`,
          CREATE_DATABASE: 'true',
          PORT: String(port),
          WORKERS: workers,
        });
        expect(code).toBe(1);
        expect(oneSentence(stderr)).toBe(`Could not start: port ${port} is already in use; set PORT`);
        // Asked to, the service created the database (and its folder) before it met the port.
        expect(existsSync(join(dir, 'new', 'cms.db'))).toBe(true);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('a checkout that was not built', () => {
  test('npm start without dist/: "dist/ is missing; run npm run build"; exit 1', async () => {
    const dir = await mkdtemp(scratchPrefix('cli-nodist'));
    try {
      await copyFile(join(process.cwd(), 'package.json'), join(dir, 'package.json'));
      const answer = await new Promise<Run>((resolve) => {
        execFile(
          'npm',
          ['start', '--silent'],
          { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 90_000 },
          (error, stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
        );
      });
      expect(answer.code).toBe(1);
      expect(oneSentence(answer.stderr)).toBe(
        'Could not start: dist/ is missing; run npm run build (npm ci runs it)',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run cms without the --', () => {
  test('npm keeps the options for itself: the tool says to put -- after npm run cms; exit 2', async () => {
    const answer = await new Promise<Run>((resolve) => {
      execFile(
        'npm',
        ['run', '--silent', 'cms', 'apikey', 'create', '--title', 't', '--scopes', 'all'],
        { env: { PATH: process.env.PATH ?? '', DATABASE_URL: UNREACHABLE }, timeout: 90_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
    });
    expect(answer.code).toBe(2);
    expect(answer.stderr.trim().split('\n')[0]).toBe(
      'cms apikey: npm kept --title, --scopes for itself: put -- after npm run cms, e.g. npm run cms -- apikey create --title "my client" --scopes all',
    );
  });
});

describe('commands on a database', () => {
  let dir: string;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(scratchPrefix('cli-errors'));
    url = `file:${join(dir, 'cms.db')}`;
    await applyMigrations(url);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('an import file that is not JSON: the line and column where it breaks; exit 1', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{"sites": [\n  {"id": 1,}\n]}\n');
    const { code, stderr } = await cms({ DATABASE_URL: url }, ['import', file]);
    expect(code).toBe(1);
    expect(oneSentence(stderr)).toBe(
      `cms import: ${file} is not valid JSON at line 2, column 12: the parser cannot parse input: unexpected token '}'; nothing was imported`,
    );
  });

  test('cms password with nothing on standard input says so; exit 1', async () => {
    const { code, stderr } = await cms({ DATABASE_URL: url }, ['password', 'user', 'lisa'], '');
    expect(code).toBe(1);
    expect(oneSentence(stderr)).toBe(
      'cms password: nothing was read from standard input; give the new password on its first line, e.g. printf \'%s\\n\' "$NEW_PASSWORD" | npm run cms -- password user lisa',
    );
  });

  test('--expires with a date alone means the end of that day in the configured zone, printed so', async () => {
    const { code, stderr } = await cms({ DATABASE_URL: url, TZ: 'Europe/Paris' }, [
      'apikey',
      'create',
      '--title',
      'until new year',
      '--scopes',
      'Contents',
      '--expires',
      '2099-12-31',
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain(
      '"until new year" created with scopes Contents, expires at the end of 2099-12-31 (Europe/Paris).',
    );
    const { db } = await createDb(url);
    try {
      const key = await db.apiKey.findFirstOrThrow({ where: { title: 'until new year' } });
      // Midnight starting 2100-01-01 in Paris (UTC+1 in winter).
      expect(key.expiresAt?.toISOString()).toBe('2099-12-31T23:00:00.000Z');
    } finally {
      await db.$disconnect();
    }
  });
});
