import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { applyMigrations } from '../src/db/migrate/index.ts';

/*
 * `npx tsx bench/writes.ts [contents]`: what one SQLite write costs by itself, on the migrated schema
 * with `contents` contents of ~2 KB in one channel: the statements of floor C's update and create
 * (bench/sql.ts), under synchronous FULL and NORMAL, without the triggers that maintain the counts,
 * and with an index that serves create's MAX("taxis") (bench/README.md, "Writes").
 */

const contents = Number(process.argv[2] ?? 20000);
const file = join(tmpdir(), `cms-bench-writes-${process.pid}.db`);
const remove = () => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
};
remove();
await applyMigrations(`file:${file}`);
const db = new Database(file);
try {
  db.pragma('journal_mode = WAL');
  db.exec(`INSERT INTO "Site" ("siteDir", "siteName") VALUES ('s', 's');
    INSERT INTO "Channel" ("guid", "siteId", "channelName") VALUES ('root', 1, 'root');
    INSERT INTO "Channel" ("guid", "siteId", "channelName", "parentId") VALUES ('c', 1, 'c', 1);`);
  db.exec(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${contents})
    INSERT INTO "Content" ("guid", "siteId", "channelId", "taxis", "title", "body", "addDate", "createdDate",
      "lastModifiedDate", "lastEditDate", "tagNames", "groupNames")
    SELECT 'g' || i, 1, 2, i, 'title ' || i, hex(randomblob(1000)), 0, 0, 0, 0, 'a,b', 'x' FROM k`);
  const now = Date.now();
  const update = db.prepare(`UPDATE "Content" SET "title" = ?, "lastModifiedDate" = ?, "lastEditDate" = ?
    WHERE "id" = ? AND "siteId" = 1 AND "channelId" = 2 AND "recycled" = 0 RETURNING *`);
  const create =
    db.prepare(`INSERT INTO "Content" ("guid", "siteId", "channelId", "taxis", "title", "addDate",
      "createdDate", "lastModifiedDate", "lastEditDate")
    SELECT ?, 1, 2, COALESCE(MAX("taxis"), 0) + 1, 'new', 0, 0, 0, 0 FROM "Content"
    WHERE "siteId" = 1 AND "recycled" = 0 AND "channelId" = 2 AND "taxis" < 2000000000 RETURNING *`);
  let created = 0;
  const rate = (label: string, write: (i: number) => void) => {
    const until = Date.now() + 1500;
    let i = 0;
    while (Date.now() < until) write(i++);
    console.log(`${label.padEnd(44)} ${(i / 1.5).toFixed(0).padStart(6)} /s`);
  };
  const updates = (label: string) =>
    rate(`update, ${label}`, (i) => update.get(`t${i}`, now, now, 1 + ((i * 7919) % contents)));
  const creates = (label: string) => rate(`create, ${label}`, () => create.get(`n${created++}`));
  console.log(`${contents} contents in one channel`);
  for (const mode of ['FULL', 'NORMAL']) {
    db.pragma(`synchronous = ${mode}`);
    updates(`synchronous ${mode}`);
    creates(`synchronous ${mode}`);
  }
  const triggers = db
    .prepare(`SELECT "name" FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'Content'`)
    .all() as { name: string }[];
  for (const { name } of triggers) db.exec(`DROP TRIGGER "${name}"`);
  updates(`NORMAL, without the ${triggers.length} triggers`);
  creates(`NORMAL, without the ${triggers.length} triggers`);
  db.exec(`CREATE INDEX "probe_taxis" ON "Content" ("siteId", "channelId", "recycled", "taxis")`);
  creates('NORMAL, no triggers, + taxis index');
} finally {
  db.close();
  remove();
}
