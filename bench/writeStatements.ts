/**
 * What one create and one update of a content cost, statement by statement (issue 20 §4): the
 * service's own domain functions (createContent, updateContent), in this process, without HTTP and
 * without any other request beside them, on the benchmark's data set (bench/generate.ts, default
 * 100,000 contents, imported as `cms import` does). For each write it prints the writes per second
 * it reaches alone, through its ordinary path (Prisma's client in writeTransaction) and through the
 * point writes (src/db/pointWrites.ts, SQLite only), then every statement it sends with its mean time and its plan (EXPLAIN QUERY
 * PLAN on SQLite, EXPLAIN on PostgreSQL), and the machine's load average (bench/WRITES.md).
 * Usage: tsx bench/writeStatements.ts [--db sqlite|postgresql] [--contents N] [--runs N]
 */

import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createDb } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { NO_POINT_WRITES } from '../src/db/pointWrites.ts';
import { openPreparation } from '../src/db/preparation.ts';
import { createContent } from '../src/domain/contents/create.ts';
import { updateContent } from '../src/domain/contents/update.ts';
import { actorOf } from '../src/domain/events/actor.ts';
import { importFrom } from '../src/domain/import/index.ts';
import { streamSource } from '../src/domain/import/source.ts';
import { type Principal, SCOPES } from '../src/domain/principal.ts';
import { SITE_ID, writeImportFile } from './generate.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const provider = option('db', 'sqlite');
const CONTENTS = Number(option('contents', '100000'));
const RUNS = Number(option('runs', '300'));
const API_KEY = `bench-write-statements-${'k'.repeat(24)}`;

async function database() {
  if (provider === 'postgresql') {
    const admin = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const { default: pg } = await import('pg');
    const onAdmin = async (sql: string) => {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      await client.query(sql);
      await client.end();
    };
    const name = `bench_statements_${process.pid}`;
    await onAdmin(`CREATE DATABASE ${name}`);
    const url = admin.replace(/\/[^/]*$/, `/${name}`);
    return { url, drop: () => onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-statements-'));
  return {
    url: `file:${join(dir, 'cms.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The plan of one statement, as the database prints it, one line per step. */
async function planOf(url: string, sql: string, paramsText: string | undefined): Promise<string[]> {
  if (provider === 'sqlite') {
    // The plan does not depend on the values: each parameter is bound to NULL.
    const params = (sql.match(/\?/g) ?? []).map(() => null);
    const db = new Database(url.slice('file:'.length), { readonly: true });
    try {
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
      return rows.map((row) => row.detail);
    } finally {
      db.close();
    }
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (paramsText === undefined) return ["(no plan: the driver's statement, its parameters not recorded)"];
    const params = JSON.parse(paramsText) as unknown[];
    await client.query(`PREPARE probe AS ${sql}`);
    const literal = (value: unknown) =>
      value === null ? 'NULL' : `'${String(value).replaceAll("'", "''")}'`;
    const rows = await client.query(`EXPLAIN EXECUTE probe(${params.map(literal).join(', ')})`);
    return rows.rows.map((row: Record<string, string>) => row['QUERY PLAN'] as string);
  } catch (error) {
    return [`(no plan: ${(error as Error).message})`];
  } finally {
    await client.end();
  }
}

const place = await database();
const dir = mkdtempSync(join(tmpdir(), 'bench-statements-file-'));
try {
  await applyMigrations(place.url);
  // The settings every start applies (SQLite's WAL mode), as the service runs.
  const preparation = await openPreparation(place.url);
  await preparation.applySettings();
  await preparation.close();
  const file = join(dir, 'contents.json');
  await writeImportFile(file, { contents: CONTENTS, seed: 42, apiKey: API_KEY });
  {
    const handle = await createDb(place.url);
    const size = statSync(file).size;
    await importFrom(
      handle,
      streamSource(() => createReadStream(file, { highWaterMark: 1 << 20 }), size),
    );
    await handle.db.$disconnect();
  }
  // Every statement, Prisma's and the driver's (the point writes); Prisma's with their parameters.
  const seen: { query: string; duration: number }[] = [];
  const paramsOf = new Map<string, string>();
  let recording = false;
  const handle = await createDb(place.url, {
    onQuery: (query, duration) => {
      if (recording) seen.push({ query, duration });
    },
  });
  (
    handle.db as unknown as {
      $on(e: 'query', f: (event: { query: string; params: string }) => void): void;
    }
  ).$on('query', (event) => {
    if (recording) paramsOf.set(event.query, event.params);
  });
  const { db } = handle;
  // The update scenario's content: the benchmark's first content of the channel it writes to.
  const target = await db.content.findFirst({
    where: { siteId: SITE_ID, recycled: false },
    orderBy: { id: 'asc' },
    select: { id: true, channelId: true, title: true },
  });
  if (!target) throw new Error('no content');
  const inChannel = await db.content.count({ where: { siteId: SITE_ID, channelId: target.channelId } });
  const principal: Principal = { kind: 'apiKey', apiKeyId: 1, scopes: new Set(SCOPES) };
  // Each write twice: through the point writes where the database has them (SQLite), and through
  // the ordinary path alone (writeTransaction on Prisma's client), what every write took before.
  const ordinary = { db, writes: NO_POINT_WRITES };
  const writes = {
    'update, ordinary path': () =>
      updateContent(
        ordinary,
        { siteId: SITE_ID, channelId: target.channelId, id: target.id },
        { title: target.title },
        actorOf(principal),
      ),
    'create, ordinary path': () =>
      createContent(
        ordinary,
        { siteId: SITE_ID, channelId: target.channelId },
        { title: 'bench create' },
        principal,
      ),
    update: () =>
      updateContent(
        handle,
        { siteId: SITE_ID, channelId: target.channelId, id: target.id },
        { title: target.title },
        actorOf(principal),
      ),
    create: () =>
      createContent(
        handle,
        { siteId: SITE_ID, channelId: target.channelId },
        { title: 'bench create' },
        principal,
      ),
  };
  console.log(
    `${provider}: ${CONTENTS} contents, the written channel holds ${inChannel}; load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  for (const [name, write] of Object.entries(writes)) {
    for (let i = 0; i < 10; i++) await write();
    seen.length = 0;
    recording = true;
    const start = performance.now();
    for (let i = 0; i < RUNS; i++) await write();
    const elapsed = performance.now() - start;
    recording = false;
    if (provider === 'sqlite') {
      // WAL frames (pages) one write appends: what a checkpoint (every 1,000 frames by default)
      // flushes, and so how many acknowledged writes a power loss may cost (docs/operating/databases.md).
      const probe = new Database(place.url.slice('file:'.length));
      const frames = () => (probe.pragma('wal_checkpoint(TRUNCATE)') as { log: number }[])[0]?.log ?? 0;
      frames();
      const FEW = 20;
      for (let i = 0; i < FEW; i++) await write();
      const log = (probe.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]?.log ?? 0;
      probe.close();
      console.log(`${name}: ${(log / FEW).toFixed(1)} WAL frames (pages) per write`);
    }
    const perWrite = new Map<string, { count: number; total: number }>();
    for (const { query, duration } of seen) {
      const entry = perWrite.get(query) ?? { count: 0, total: 0 };
      entry.count++;
      entry.total += duration;
      perWrite.set(query, entry);
    }
    console.log(
      `\n${name}: ${((RUNS * 1000) / elapsed).toFixed(0)} writes/s alone (${(elapsed / RUNS).toFixed(2)} ms each, ` +
        `${(seen.length / RUNS).toFixed(0)} statements each)`,
    );
    for (const [query, { count, total }] of perWrite) {
      console.log(
        `  ${(total / count).toFixed(2)} ms x${(count / RUNS).toFixed(0)}  ${query.replace(/\s+/g, ' ').slice(0, 300)}`,
      );
      const isStatement = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)/i.test(query);
      if (isStatement)
        for (const line of await planOf(place.url, query, paramsOf.get(query)))
          console.log(`      plan: ${line}`);
    }
  }
  await db.$disconnect();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await place.drop();
}
process.exit(0);
