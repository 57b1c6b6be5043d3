import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createDb } from '../../src/db/client.ts';
import { md5Hex, verifyMd5Password } from '../../src/domain/accounts/passwords.ts';
import { type Run, runScript } from '../process/processes.ts';
import { createEmptyDatabase, type EmptyDatabase } from '../support/database.ts';
import { scratchPrefix } from '../support/run.ts';

/*
 * `cms export` and `cms import` as an operator runs them: child processes on real databases
 * (SQLite, or PostgreSQL with TEST_DATABASE_URL). The large import runs under a small heap cap:
 * the import streams, so it fits where reading the whole file (about 1.2 GB for these 50,000
 * contents before streaming) could not.
 */

/** Runs the CLI as `npm run cms` does (node with tsx as loader), so that node's own flags apply. */
function cms(databaseUrl: string, args: string[], nodeFlags: string[] = [], stdin = ''): Promise<Run> {
  return runScript(
    'src/cli/main.ts',
    args,
    { DATABASE_URL: databaseUrl },
    { nodeFlags, stdin, timeoutMs: 600_000 },
  );
}

const CONTENTS = 50_000;
/** MB of V8 heap the large import may use: far below what the whole document would take. */
const HEAP_CAP_MB = 200;

async function writeLargeFile(file: string): Promise<void> {
  const output = createWriteStream(file);
  const write = async (text: string) => {
    if (!output.write(text)) await once(output, 'drain');
  };
  // Contents first: their channels come later in the file, and the import must still find them.
  await write('{"contents": [\n');
  for (let i = 0; i < CONTENTS; i++) {
    const record = {
      id: i + 1,
      channelId: 2 + (i % 2),
      title: `Article ${i}`,
      body: `<p>${'Lorem ipsum dolor sit amet. '.repeat(8)}</p>`,
      tagNames: ['bulk', `t${i % 10}`],
      checkedLevel: i % 4 === 0 ? 0 : 1,
      hits: i,
      addDate: '2024-06-01 12:00:00',
    };
    await write(`${i === 0 ? '' : ',\n'}${JSON.stringify(record)}`);
  }
  await write('\n],\n"channels": [{"id": 3, "siteId": 1, "parentId": 2, "channelName": "B"},');
  await write('{"id": 2, "siteId": 1, "parentId": 1, "channelName": "A"}],\n');
  await write('"sites": [{"id": 1, "siteDir": "bulk", "siteName": "Bulk"}]}\n');
  output.end();
  await once(output, 'finish');
}

describe('cms export and import', () => {
  let dir: string;
  const databases: EmptyDatabase[] = [];
  const database = async () => {
    const created = await createEmptyDatabase();
    databases.push(created);
    return created.url;
  };

  beforeAll(async () => {
    dir = await mkdtemp(scratchPrefix('dataio'));
  });
  afterAll(async () => {
    for (const created of databases) await created.drop();
    await rm(dir, { recursive: true, force: true });
  });

  test(`imports ${CONTENTS.toLocaleString('en-US')} contents under a ${HEAP_CAP_MB} MB heap, exports and imports them again`, async () => {
    const file = join(dir, 'large.json');
    await writeLargeFile(file);
    const first = await database();
    const imported = await cms(first, ['import', file], [`--max-old-space-size=${HEAP_CAP_MB}`]);
    expect(imported.stderr).not.toContain('heap out of memory');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/contents +50000\n/);
    expect(imported.stdout).toMatch(/channels +3 \(1 root channel created\)\n/);
    // Not a terminal: progress comes as plain lines on stderr, each phase closed by one.
    expect(imported.stderr).toMatch(/^Checking: started, [\d.]+ MB$/m);
    expect(imported.stderr).toMatch(/^Checking: done, [\d.]+ MB in \d+/m);
    expect(imported.stderr).toMatch(/^Writing: done, 50,000 contents in \d+/m);

    const exported = join(dir, 'export.json');
    const exporting = await cms(first, ['export', exported], [`--max-old-space-size=${HEAP_CAP_MB}`]);
    expect(exporting.code).toBe(0);
    expect(exporting.stdout).toMatch(/contents +50000\n/);
    expect(exporting.stderr).toMatch(/^Exporting: done, 50,004 records in \d+/m);
    // Only the finished file is left: no partial file beside it.
    expect((await readdir(dir)).sort()).toEqual(['export.json', 'large.json']);

    const second = await database();
    const again = await cms(second, ['import', exported], [`--max-old-space-size=${HEAP_CAP_MB}`]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/contents +50000\n/);
    expect(again.stdout).toMatch(/channels +3\n/);
    const { db } = await createDb(second);
    try {
      expect(await db.content.count({ where: { checked: true } })).toBe(37_500);
      expect(await db.content.findUniqueOrThrow({ where: { id: 50_000 } })).toMatchObject({
        channelId: 3,
        siteId: 1,
        hits: 49_999,
        tagNames: 'bulk,t9',
      });
      expect(await db.channel.findUniqueOrThrow({ where: { id: 3 } })).toMatchObject({ parentsPath: '1,2' });
    } finally {
      await db.$disconnect();
    }
    // Three runs of the tool over 50,000 records: minutes on a loaded machine, not a minute.
  }, 900_000);

  test('a file that is not JSON, or breaks off, is refused before anything is written', async () => {
    const url = await database();
    const broken = join(dir, 'broken.json');
    await writeFile(
      broken,
      '{"sites": [{"id": 1, "siteDir": "a", "siteName": "A"}], "contents": [{"channelId": 1,',
    );
    const run = await cms(url, ['import', broken]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cms import: ${broken} is not valid JSON`);
    expect(run.stderr).toContain('nothing was imported');
    const garbage = join(dir, 'garbage.json');
    await writeFile(garbage, '{"sites": [] } trailing');
    const trailing = await cms(url, ['import', garbage]);
    expect(trailing.code).toBe(1);
    expect(trailing.stderr).toContain('is not valid JSON');
    const { db } = await createDb(url);
    try {
      expect(await db.site.count()).toBe(0);
    } finally {
      await db.$disconnect();
    }
  });

  test('bad records are each named, in file order, whatever the order of the sections', async () => {
    const url = await database();
    const file = join(dir, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        contents: [
          { id: 1, channelId: 2, title: 'ok' },
          { id: 1, channelId: 2, title: 'same id' },
          { id: 2, channelId: 9, title: 'no channel' },
          { id: 3, channelId: 2, titel: 'typo' },
        ],
        channels: [{ id: 2, siteId: 1, parentId: 1, channelName: 'A' }],
        sites: [{ id: 1, siteDir: 'a', siteName: 'A' }],
        contentz: [],
        users: [
          { userName: 'nopass', password: null },
          { userName: 'weak', password: 'short' },
        ],
      }),
    );
    const run = await cms(url, ['import', file]);
    expect(run.code).toBe(1);
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('  '));
    expect(lines).toEqual([
      '  contentz: unknown key (expected sites, channels, contents, users, administrators, apiKeys)',
      '  contents[1] (id 1): duplicate id 1 (also contents[0])',
      '  contents[2] (id 2): channel 9 does not exist',
      "  contents[3] (id 3): unknown field 'titel'",
      "  users[1]: field 'password' must be at least 6 characters with a letter and a digit",
    ]);
    expect(run.stderr).toContain('The import file has 5 problems; nothing was imported');
    // The progress of a run that imported nothing never says its writing was done.
    expect(run.stderr).toMatch(/^Writing: stopped after \d+ s, nothing kept$/m);
    expect(run.stderr).not.toMatch(/^Writing: done/m);
  });

  test('export refuses a path it cannot write, leaving nothing behind', async () => {
    const url = await database();
    const run = await cms(url, ['export', join(dir, 'missing-folder', 'out.json')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot write');
    expect((await cms(url, ['export'])).code).toBe(2);
    const help = await cms(url, ['help']);
    expect(help.stdout).toContain('cms export FILE');
    // The file written by the first test, the others' inputs: nothing new.
    expect((await readdir(dir)).filter((name) => name.includes('partial'))).toEqual([]);
    expect(JSON.parse(await readFile(join(dir, 'export.json'), 'utf8'))).toHaveProperty('apiKeys', []);
  });

  test('password gives an account imported without one a new password, from stdin', async () => {
    const url = await database();
    const file = join(dir, 'accounts.json');
    await writeFile(
      file,
      JSON.stringify({
        users: [{ id: 4, userName: 'moved', password: null, tokenVersion: 2, countOfFailedLogin: 3 }],
        administrators: [{ userName: 'boss', password: null }],
      }),
    );
    expect((await cms(url, ['import', file])).code).toBe(0);
    const weak = await cms(url, ['password', 'user', 'moved'], [], 'short\n');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('the password must be at least 6 characters with a letter and a digit');
    const unknown = await cms(url, ['password', 'user', 'nobody'], [], 'Fresh1234\n');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no user named 'nobody'");
    expect((await cms(url, ['password', 'group', 'moved'])).code).toBe(2);

    const set = await cms(url, ['password', 'user', 'moved'], [], 'Fresh1234\n');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("New password set for user 'moved'.");
    expect(set.stdout + set.stderr).not.toContain('Fresh1234');
    const admin = await cms(url, ['password', 'administrator', 'boss'], [], 'Boss5678');
    expect(admin.code).toBe(0);
    const { db } = await createDb(url);
    try {
      const user = await db.user.findUniqueOrThrow({ where: { id: 4 } });
      expect(user).toMatchObject({ tokenVersion: 3, countOfFailedLogin: 0, lockedUntil: null });
      expect(await verifyMd5Password(md5Hex('Fresh1234'), user)).toBe(true);
      expect(await verifyMd5Password(md5Hex('short'), user)).toBe(false);
      const boss = await db.administrator.findUniqueOrThrow({ where: { userName: 'boss' } });
      expect(await verifyMd5Password(md5Hex('Boss5678'), boss)).toBe(true);
    } finally {
      await db.$disconnect();
    }
  });
});
