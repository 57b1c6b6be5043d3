import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { createDb } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { type ListContentsRequest, listContentRecords } from '../src/domain/contents/list.ts';
import { importDocument } from '../src/domain/import/index.ts';

/*
 * `npx tsx bench/hostile.ts`: the most expensive content lists a client may ask for within the
 * contract's limits, timed on SQLite, where the driver runs every statement on the event loop (a
 * slow query stalls every other request of the process). HOSTILE_CONTENTS contents (default
 * 100,000) with ~2 KB bodies; the database is kept in HOSTILE_DB (default .tmp/hostile.db) and
 * reused when it already holds them. Figures go to bench/HOSTILE.md.
 */

const CONTENTS = Number(process.env.HOSTILE_CONTENTS ?? 100_000);
const FILE = process.env.HOSTILE_DB ?? join(process.cwd(), '.tmp', 'hostile.db');
const MAX_PER_PAGE = 1000;
const RUNS = Number(process.env.HOSTILE_RUNS ?? 1);

function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'report', 'notes', 'launch', 'review', 'data', 'banana'];

function document() {
  const next = random(11);
  const word = () => WORDS[Math.floor(next() * WORDS.length)];
  const channels = [{ id: 1, siteId: 1, parentId: 0, channelName: 'Root' }];
  for (let i = 2; i <= 21; i++) channels.push({ id: i, siteId: 1, parentId: 1, channelName: `Section ${i}` });
  const groups = Array.from({ length: 30 }, (_, n) => `group-${n}`);
  const contents = Array.from({ length: CONTENTS }, (_, index) => {
    let body = '<p>';
    while (body.length < 2000) body += `${word()} `;
    return {
      id: index + 1,
      siteId: 1,
      channelId: 1 + Math.floor(next() * 21),
      title: `${word()} ${word()} ${index}`,
      summary: `${word()} ${word()} ${word()}`,
      body: `${body}</p>`,
      author: word(),
      taxis: Math.floor(next() * 1000),
      hits: Math.floor(next() * 10000),
      checkedLevel: next() < 0.8 ? 1 : 0,
      top: next() < 0.05,
      groupNames: next() < 0.5 ? [groups[Math.floor(next() * 30)] as string] : [],
      tagNames: next() < 0.5 ? [`tag-${Math.floor(next() * 50)}`] : [],
      addDate: `2024-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 9)} 10:00:00`,
    };
  });
  return { sites: [{ id: 1, siteDir: 'hostile', siteName: 'Hostile' }], channels, contents };
}

const likeAll = '%a'.repeat(500);
const likeNone = `${'%a'.repeat(499)}%z`;
const names = (prefix: string) => Array.from({ length: 100 }, (_, n) => `${prefix}${n}`.padEnd(255, 'x'));
const inList = (column: string, item: (n: number) => string) => ({
  column,
  operator: 'In',
  value: Array.from({ length: 1000 }, (_, n) => item(n)).join(','),
});
const like = (column: string, operator: string, value: string) => ({ column, operator, value });
const fiftyOf = (rule: { column: string; operator: string; value: string }) =>
  Array.from({ length: 50 }, () => rule);
const tenOrders = [
  { column: 'body', desc: true },
  { column: 'summary', desc: false },
  { column: 'title', desc: true },
  { column: 'author', desc: false },
  { column: 'hits', desc: true },
  { column: 'taxis', desc: false },
  { column: 'addDate', desc: true },
  { column: 'guid', desc: false },
  { column: 'linkUrl', desc: true },
  { column: 'id', desc: false },
];

export const SCENARIOS: [string, ListContentsRequest][] = [
  ['baseline: first page, default order', { siteId: 1 }],
  ['1 × body Like %alpha%', { siteId: 1, wheres: [like('body', 'Like', '%alpha%')] }],
  ['1 × body Like %a…%z (1,000 chars)', { siteId: 1, wheres: [like('body', 'Like', likeNone)] }],
  ['1 × body Like %a%a… (1,000 chars)', { siteId: 1, wheres: [like('body', 'Like', likeAll)] }],
  ['1 × body NotLike %a…%z (1,000 chars)', { siteId: 1, wheres: [like('body', 'NotLike', likeNone)] }],
  [
    '5 × body NotLike %a…%z (1,000 chars)',
    { siteId: 1, wheres: Array(5).fill(like('body', 'NotLike', likeNone)) },
  ],
  [
    '50 × body Like %a%a… (1,000 chars, matches)',
    { siteId: 1, wheres: fiftyOf({ column: 'body', operator: 'Like', value: likeAll }) },
  ],
  [
    '50 × body Like %a…%z (1,000 chars, no match)',
    { siteId: 1, wheres: fiftyOf({ column: 'body', operator: 'Like', value: likeNone }) },
  ],
  [
    '50 × body NotLike %a…%z (matches all)',
    { siteId: 1, wheres: fiftyOf({ column: 'body', operator: 'NotLike', value: likeNone }) },
  ],
  [
    '50 × body NotLike %a%a… (no match)',
    { siteId: 1, wheres: fiftyOf({ column: 'body', operator: 'NotLike', value: likeAll }) },
  ],
  [
    '50 × title Like %a…%z',
    { siteId: 1, wheres: fiftyOf({ column: 'title', operator: 'Like', value: likeNone }) },
  ],
  [
    '100 groupNames + 100 tagNames (255 chars, none match)',
    { siteId: 1, groupNames: names('g'), tagNames: names('t') },
  ],
  ['50 × title In 1,000 items', { siteId: 1, wheres: fiftyOf(inList('title', (n) => `t${n}`)) }],
  [
    '50 × body NotIn 1,000 items',
    { siteId: 1, wheres: fiftyOf({ ...inList('body', (n) => `b${n}`), operator: 'NotIn' }) },
  ],
  ['50 × groupNames In 1,000 names', { siteId: 1, wheres: fiftyOf(inList('groupNames', (n) => `g${n}`)) }],
  ['deep page: 1,000 per page, page 100', { siteId: 1, page: 100, perPage: MAX_PER_PAGE }],
  ['page past the end: page 2^31-1', { siteId: 1, page: 2 ** 31 - 1, perPage: MAX_PER_PAGE }],
  [
    '10 orders (body first), 1,000 per page, page 100',
    { siteId: 1, page: 100, perPage: MAX_PER_PAGE, orders: tenOrders },
  ],
  [
    '1 order (title), 1,000 per page, page 100',
    { siteId: 1, page: 100, perPage: MAX_PER_PAGE, orders: [{ column: 'title', desc: true }] },
  ],
  ['1 order (body), 30 per page', { siteId: 1, orders: [{ column: 'body', desc: true }] }],
  [
    '20 groupNames + 20 tagNames (255 chars, none match)',
    { siteId: 1, groupNames: names('g').slice(0, 20), tagNames: names('t').slice(0, 20) },
  ],
  ['20 × title In 1,000 items', { siteId: 1, wheres: Array(20).fill(inList('title', (n) => `t${n}`)) }],
  [
    'everything: 50 × NotLike %a…%z, 100 groups, 10 orders, page 99',
    {
      siteId: 1,
      groupNames: names('group-'),
      wheres: fiftyOf({ column: 'body', operator: 'NotLike', value: likeNone }),
      orders: tenOrders,
      page: 99,
      perPage: MAX_PER_PAGE,
    },
  ],
];

/**
 * What an abort could look like on this driver, which has neither sqlite3_interrupt nor a progress
 * handler: a function of the connection, first term of the WHERE, that throws once the statement's
 * deadline (a bound parameter) has passed. SQLite evaluates it for each row it visits.
 */
function deadlineDemo() {
  const raw = new Database(FILE, { readonly: true });
  raw.function('cms_deadline', (deadline) => {
    if (Date.now() > Number(deadline)) throw new Error('statement ran past its deadline');
    return 1;
  });
  const time = (label: string, statement: string, ...params: unknown[]) => {
    const start = performance.now();
    let outcome = 'completed';
    try {
      raw.prepare(statement).get(...params);
    } catch (error) {
      outcome = (error as Error).message;
    }
    console.log(`| ${label} | ${(performance.now() - start).toFixed(0)} | ${outcome} |`);
  };
  console.log('| statement (raw better-sqlite3) | ms | outcome |');
  console.log('|---|---:|---|');
  const notLikes = Array(5).fill(`"body" NOT LIKE ? ESCAPE '\\'`).join(' AND ');
  const patterns = Array(5).fill(likeNone);
  time('COUNT(*), full scan, no filter', 'SELECT COUNT(*) FROM "Content" WHERE "recycled" = 0');
  time(
    'COUNT(*), full scan, cms_deadline(+60 s) first',
    'SELECT COUNT(*) FROM "Content" WHERE cms_deadline(?) AND "recycled" = 0',
    Date.now() + 60_000,
  );
  time(
    `5 × body NOT LIKE %a…%z, no deadline`,
    `SELECT COUNT(*) FROM "Content" WHERE ${notLikes}`,
    ...patterns,
  );
  time(
    `5 × body NOT LIKE %a…%z, cms_deadline(+1 s) first`,
    `SELECT COUNT(*) FROM "Content" WHERE cms_deadline(?) AND ${notLikes}`,
    Date.now() + 1000,
    ...patterns,
  );
  time(
    'ORDER BY body, cms_deadline(+1 s) first',
    'SELECT * FROM "Content" WHERE cms_deadline(?) ORDER BY "body" DESC LIMIT 30',
    Date.now() + 1000,
  );
  raw.close();
}

async function main() {
  if (process.env.HOSTILE_DEADLINE_DEMO) {
    deadlineDemo();
    process.exit(0);
  }
  mkdirSync(join(FILE, '..'), { recursive: true });
  const url = `file:${FILE}`;
  const fresh = !existsSync(FILE);
  await applyMigrations(url);
  const handle = await createDb(url);
  const { db } = handle;
  try {
    if (fresh || (await db.content.count()) !== CONTENTS) {
      await db.content.deleteMany();
      await db.channel.deleteMany();
      await db.site.deleteMany();
      const start = performance.now();
      await importDocument(handle, document());
      console.log(`${CONTENTS} contents imported in ${((performance.now() - start) / 1000).toFixed(1)} s`);
    }
    const only = process.env.HOSTILE_ONLY;
    console.log(`| request | ms (${RUNS} run(s)) | totalCount |`);
    console.log('|---|---:|---:|');
    for (const [name, request] of SCENARIOS) {
      if (only && !only.split('|').some((part) => name.includes(part))) continue;
      const times: number[] = [];
      let total = 0;
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        try {
          total = (await listContentRecords(handle, request, MAX_PER_PAGE)).totalCount;
        } catch (error) {
          total = -1;
          console.log(`  ${name}: ${(error as Error).message.split('\n').at(-1)}`);
        }
        times.push(performance.now() - start);
      }
      console.log(`| ${name} | ${times.map((t) => t.toFixed(0)).join(' | ')} | ${total} |`);
    }
  } finally {
    await db.$disconnect();
  }
  process.exit(0);
}

await main();
