import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDb, type Db, type DbProvider } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { toContentFormA } from '../src/domain/contents/forms.ts';
import { type ListContentsRequest, listContents } from '../src/domain/contents/list.ts';
import { importDocument } from '../src/domain/import/index.ts';

/*
 * `npm run bench`: the content list against a baseline measured in the same run on the same data —
 * the same request answered the way plain ORM code would (load the channel tree to find the
 * descendants, then findMany + count through Prisma's query builder). Figures are ratios, so they
 * hold on any machine. BENCH_DATABASE_URL picks the database (default: a temporary SQLite file);
 * BENCH_CONTENTS the number of contents (default 20000).
 */

const CONTENTS = Number(process.env.BENCH_CONTENTS ?? 20000);
const ROUNDS = 40;

function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

function benchDocument() {
  const next = random(7);
  const channels = [{ id: 1, siteId: 1, parentId: 0, channelName: 'Root' }];
  for (let i = 2; i <= 21; i++) channels.push({ id: i, siteId: 1, parentId: 1, channelName: `Section ${i}` });
  for (let i = 22; i <= 101; i++)
    channels.push({ id: i, siteId: 1, parentId: 2 + (i % 20), channelName: `Topic ${i}` });
  const words = ['alpha', 'beta', 'gamma', 'delta', 'report', 'notes', 'launch', 'review'];
  const contents = Array.from({ length: CONTENTS }, (_, index) => ({
    id: index + 1,
    siteId: 1,
    channelId: 1 + Math.floor(next() * 101),
    title: `${words[Math.floor(next() * 8)]} ${words[Math.floor(next() * 8)]} ${index}`,
    body: `<p>Body of content ${index}</p>`,
    taxis: Math.floor(next() * 1000),
    hits: Math.floor(next() * 10000),
    checkedLevel: next() < 0.8 ? 1 : 0,
    top: next() < 0.05,
    hot: next() < 0.2,
    groupNames: next() < 0.3 ? ['featured'] : [],
    addDate: `2024-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 9)} 10:00:00`,
  }));
  return { sites: [{ id: 1, siteDir: 'bench', siteName: 'Bench' }], channels, contents };
}

/** The same request, answered as straightforward ORM code would. */
async function baseline(db: Db, request: ListContentsRequest & { perPage: number }) {
  const channels = await db.channel.findMany({
    where: { siteId: request.siteId },
    select: { id: true, parentId: true },
  });
  let scope: number[] | undefined;
  if (request.channelId !== undefined) {
    scope = [request.channelId];
    for (let i = 0; i < scope.length; i++) {
      for (const channel of channels) if (channel.parentId === scope[i]) scope.push(channel.id);
    }
  }
  const where = {
    siteId: request.siteId,
    recycled: false,
    ...(scope && { channelId: { in: scope } }),
    ...(request.checked !== undefined && { checked: request.checked }),
    ...(request.hot !== undefined && { hot: request.hot }),
    ...(request.groupNames && { OR: request.groupNames.map((name) => ({ groupNames: { contains: name } })) }),
    ...(request.wheres?.[0] && { title: { contains: String(request.wheres[0].value).replaceAll('%', '') } }),
  };
  const orderBy = request.orders?.length
    ? request.orders.map((order) => ({ [order.column]: order.desc ? 'desc' : 'asc' }))
    : [
        { top: 'desc' as const },
        { channelId: 'desc' as const },
        { taxis: 'desc' as const },
        { id: 'desc' as const },
      ];
  const skip = ((request.page ?? 1) - 1) * request.perPage;
  const [rows, totalCount] = await Promise.all([
    db.content.findMany({ where, orderBy, skip, take: request.perPage }),
    db.content.count({ where }),
  ]);
  return { totalCount, contents: rows.map(toContentFormA) };
}

async function timeIt(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await run();
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) await run();
  return (performance.now() - start) / ROUNDS;
}

const SCENARIOS: [string, ListContentsRequest & { perPage: number }][] = [
  ['whole site, default order, first page', { siteId: 1, perPage: 30 }],
  [
    'subtree + checked + hot, by hits',
    {
      siteId: 1,
      channelId: 2,
      checked: true,
      hot: true,
      perPage: 30,
      orders: [{ column: 'hits', desc: true }],
    },
  ],
  [
    'title Like + group, page 5',
    {
      siteId: 1,
      groupNames: ['featured'],
      wheres: [{ column: 'title', operator: 'Like', value: '%alpha%' }],
      page: 5,
      perPage: 20,
    },
  ],
  ['deep page (page 400 of 30)', { siteId: 1, page: 400, perPage: 30 }],
];

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'cms-bench-'));
  const url = process.env.BENCH_DATABASE_URL ?? `file:${join(folder, 'bench.db')}`;
  await applyMigrations(url);
  const { db, provider } = createDb(url);
  try {
    await db.content.deleteMany();
    await db.channel.deleteMany();
    await db.site.deleteMany();
    const document = benchDocument();
    const importStart = performance.now();
    await importDocument(db, document);
    const importSeconds = (performance.now() - importStart) / 1000;
    console.log(`database: ${provider}; ${CONTENTS} contents imported in ${importSeconds.toFixed(2)} s`);
    console.log('scenario | ours ms | baseline ms | ours/baseline (lower is better)');
    for (const [name, request] of SCENARIOS) {
      const ours = await timeIt(() => listContents(db, provider as DbProvider, request, 1000));
      const theirs = await timeIt(() => baseline(db, request));
      console.log(`${name} | ${ours.toFixed(2)} | ${theirs.toFixed(2)} | ${(ours / theirs).toFixed(2)}`);
    }
  } finally {
    await db.$disconnect();
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
