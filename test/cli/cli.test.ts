import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb, type DbHandle } from '../../src/db/client.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { digestApiKey } from '../../src/domain/crypto/apiKeys.ts';
import { rowCounts } from '../import/rowCounts.ts';
import { leaks } from '../support/leaks.ts';
import { scratchPrefix } from '../support/run.ts';

/*
 * The command-line tool as an operator runs it: a child process on a temporary SQLite file
 * (migrations applied by the tool itself on first use).
 */

const TSX = join(process.cwd(), 'node_modules', '.bin', 'tsx');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cms(databaseUrl: string, ...args: string[]): Promise<Run> {
  // The file's secret scan reads what the tool printed (test/support/leaks.ts).
  let output = '';
  leaks.watchProcess(`cms ${args.join(' ')}`.slice(0, 80), () => output);
  return new Promise((resolve) => {
    execFile(
      TSX,
      ['src/cli/main.ts', ...args],
      { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        output = `${stdout}\n${stderr}`;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('cms command-line tool', () => {
  let dir: string;
  let url: string;
  let handle: DbHandle | undefined;
  const db = async () => {
    handle ??= await createDb(url);
    return handle.db;
  };

  beforeAll(async () => {
    dir = await mkdtemp(scratchPrefix('cli'));
    url = `file:${join(dir, 'cms.db')}`;
    // The tool never creates a database: each one it works on is an (empty) file already.
    for (const name of ['cms.db', 'empty.db', 'conflict.db']) await writeFile(join(dir, name), '');
  });
  afterAll(async () => {
    await handle?.db.$disconnect();
    await rm(dir, { recursive: true, force: true });
  });

  test('help prints the usage; no command or an unknown one is a usage error', async () => {
    const help = await cms(url, 'help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('cms apikey create --title TITLE --scopes');
    expect(help.stdout).toContain('cms seed-demo');
    expect((await cms(url)).code).toBe(2);
    const unknown = await cms(url, 'frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });

  test('apikey create prints a new key once; the database keeps its digest', async () => {
    const run = await cms(
      url,
      'apikey',
      'create',
      '--title',
      'CI bot',
      '--scopes',
      'Contents,stl',
      '--expires',
      '2099-12-31',
    );
    expect(run.code).toBe(0);
    const key = run.stdout.trim();
    expect(key).toMatch(/^cms_[A-Za-z0-9_-]{43}$/);
    expect(run.stderr).toContain('cannot be shown again');
    const row = await (await db()).apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(key) } });
    expect(row).toMatchObject({ title: 'CI bot', scopes: 'Contents,STL', revokedAt: null });
    // Valid through the whole day given.
    expect(row.expiresAt).toEqual(new Date(2100, 0, 1));
    expect(JSON.stringify(row)).not.toContain(key);

    const all = await cms(url, 'apikey', 'create', '--title', 'Everything', '--scopes', 'all');
    expect(all.code).toBe(0);
    const everything = await (await db()).apiKey.findUniqueOrThrow({
      where: { digest: digestApiKey(all.stdout.trim()) },
    });
    expect(everything.scopes).toBe('Contents,Channels,STL,Users,Administrators,Others,ApiKeys,Webhooks');
  });

  test('apikey create refuses unknown scopes and missing options, creating nothing', async () => {
    const before = await (await db()).apiKey.count();
    const bad = await cms(url, 'apikey', 'create', '--title', 'Bad', '--scopes', 'Contents,Everything');
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain(
      "unknown scope 'Everything'; valid scopes: Contents, Channels, STL, Users, Administrators, Others, ApiKeys, Webhooks (or 'all' for every scope)",
    );
    const untitled = await cms(url, 'apikey', 'create', '--scopes', 'all');
    expect(untitled.code).toBe(2);
    expect(untitled.stderr).toContain('--title is required');
    const past = await cms(
      url,
      'apikey',
      'create',
      '--title',
      'Old',
      '--scopes',
      'all',
      '--expires',
      '2001-01-01',
    );
    expect(past.code).toBe(2);
    expect(past.stderr).toContain('--expires must lie in the future');
    expect((await cms(url, 'apikey', 'revoke')).code).toBe(2);
    expect(await (await db()).apiKey.count()).toBe(before);
  });

  test('import of a bad file prints every problem, exits 1 and writes nothing', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        sites: [{ id: 1, siteDir: 'main', siteName: 'Main' }],
        channels: [{ id: 2, siteId: 1, parentId: 1, channelName: 'News' }],
        contents: [
          { id: 1, channelId: 2, titel: 'Typo' },
          { id: 2, channelId: 99, title: 'Lost' },
        ],
      }),
    );
    const before = await rowCounts(await db());
    const run = await cms(url, 'import', file);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('The import file has 2 problems; nothing was imported');
    expect(run.stderr).toContain("  contents[0] (id 1): unknown field 'titel'");
    expect(run.stderr).toContain('  contents[1] (id 2): channel 99 does not exist');
    expect(await rowCounts(await db())).toEqual(before);

    const invalidJson = join(dir, 'broken.json');
    await writeFile(invalidJson, '{"sites": [');
    const broken = await cms(url, 'import', invalidJson);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('is not valid JSON');
    const missing = await cms(url, 'import', join(dir, 'missing.json'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read');
    expect((await cms(url, 'import')).code).toBe(2);
  });

  test('import of a good file prints a summary per table', async () => {
    const file = join(dir, 'good.json');
    await writeFile(
      file,
      JSON.stringify({
        sites: [{ id: 1, siteDir: 'main', siteName: 'Main' }],
        channels: [{ id: 2, siteId: 1, parentId: 1, channelName: 'News', indexName: 'news' }],
        contents: [{ id: 1, channelId: 2, title: 'Hello' }],
      }),
    );
    const run = await cms(url, 'import', file);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/sites +1\n/);
    expect(run.stdout).toMatch(/channels +2 \(1 root channel created\)\n/);
    expect(run.stdout).toMatch(/contents +1\n/);
    expect(run.stdout).toMatch(/apiKeys +0\n/);
    expect(await (await db()).content.findUniqueOrThrow({ where: { id: 1 } })).toMatchObject({
      title: 'Hello',
      siteId: 1,
    });
  });

  test('seed-demo refuses a database that already has a site', async () => {
    const run = await cms(url, 'seed-demo');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('already has 1 site');
    expect(await (await db()).content.count()).toBe(1);
  });

  test('seed-demo fills an empty database with random passwords and prints them and the key once', async () => {
    const emptyUrl = `file:${join(dir, 'empty.db')}`;
    const run = await cms(emptyUrl, 'seed-demo');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Demo site created: 1 site, 6 channels, 40 contents.');
    expect(run.stdout).not.toContain('demo1234');
    expect(run.stdout).not.toContain('admin1234');
    const userPassword = /User: +demo-user \/ (\S+)/.exec(run.stdout)?.[1] ?? '';
    const adminPassword = /Administrator: +admin \/ (\S+)/.exec(run.stdout)?.[1] ?? '';
    expect(userPassword).toMatch(/^[\w-]{16}$/);
    expect(adminPassword).toMatch(/^[\w-]{16}$/);
    expect(adminPassword).not.toBe(userPassword);
    const key = /API key "Demo key" \(all scopes\): (\S+)/.exec(run.stdout)?.[1] ?? '';
    const seeded = await createDb(emptyUrl);
    try {
      const row = await seeded.db.apiKey.findUniqueOrThrow({ where: { digest: digestApiKey(key) } });
      expect(row.title).toBe('Demo key');
      expect(await seeded.db.content.count()).toBe(40);
      const user = await seeded.db.user.findUniqueOrThrow({ where: { userName: 'demo-user' } });
      expect(await verifyMd5Password(md5Hex(userPassword), user)).toBe(true);
      const admin = await seeded.db.administrator.findUniqueOrThrow({ where: { userName: 'admin' } });
      expect(await verifyMd5Password(md5Hex(adminPassword), admin)).toBe(true);
    } finally {
      await seeded.db.$disconnect();
    }
    const again = await cms(emptyUrl, 'seed-demo');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already has 1 site');
  });

  test('seed-demo that fails writes nothing and says why in one line', async () => {
    const conflictUrl = `file:${join(dir, 'conflict.db')}`;
    expect((await cms(conflictUrl, 'apikey', 'create', '--title', 'ops', '--scopes', 'all')).code).toBe(0);
    const conflicting = await createDb(conflictUrl);
    try {
      // An administrator named like the demo's: the import refuses the whole demo.
      await conflicting.db.administrator.create({
        data: { userName: 'admin', passwordHash: 'x', passwordSalt: 'y' },
      });
      const run = await cms(conflictUrl, 'seed-demo');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('nothing was imported');
      expect(run.stdout).toBe('');
      expect(await rowCounts(conflicting.db)).toMatchObject({
        sites: 0,
        channels: 0,
        contents: 0,
        users: 0,
        administrators: 1,
        apiKeys: 1,
      });
    } finally {
      await conflicting.db.$disconnect();
    }
  });
});
