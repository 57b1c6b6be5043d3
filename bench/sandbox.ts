import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { applyMigrations } from '../src/db/migrate/index.ts';
import {
  createDatabase,
  dropDatabase,
  uniqueDatabaseName,
  withDatabase,
} from '../src/db/migrate/postgres.ts';
import { openSandbox } from '../src/db/sandbox/index.ts';
import { DomainError } from '../src/domain/errors.ts';
import { runSqlContents } from '../src/domain/stl/sql/sandbox.ts';

/*
 * `npx tsx bench/sandbox.ts [sqlite|postgresql]`: the stl/sqlContents sandbox under the two loads of
 * issue 15 §4, in-process through the domain function the handler calls (no HTTP): (1) one caller
 * floods 16 queries that run to the time limit while another asks for one row; (2) the largest
 * answer a query within the contract can ask for, against the size cap, and a width-driven value.
 * PostgreSQL: BENCH_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres), a
 * temporary database dropped afterwards. Figures go to bench/HOSTILE.md.
 */

const provider = process.argv[2] === 'postgresql' ? 'postgresql' : 'sqlite';
const limits = { maxRows: 1000, maxBytes: 4 * 1024 * 1024, timeoutMs: 2000, maxLength: 10_000 };
const ENDLESS =
  'WITH RECURSIVE forever(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM forever) SELECT count(*) AS n FROM forever';

async function outcome(sql: string, caller: string): Promise<{ ms: number; result: string }> {
  const start = performance.now();
  try {
    const rows = await runSqlContents(sandbox, sql, limits, caller);
    return { ms: performance.now() - start, result: `200 (${rows.length} rows)` };
  } catch (error) {
    const status = error instanceof DomainError ? (error.code === 'rate-limited' ? 429 : 400) : 500;
    const detail = error instanceof Error ? error.message.slice(0, 70) : String(error);
    return { ms: performance.now() - start, result: `${status} ${detail}` };
  }
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

let url: string;
let cleanup: () => Promise<void>;
if (provider === 'sqlite') {
  const dir = mkdtempSync(join(tmpdir(), 'cms-sandbox-bench-'));
  url = `file:${join(dir, 'cms.db')}`;
  cleanup = async () => rmSync(dir, { recursive: true, force: true });
} else {
  const server = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = uniqueDatabaseName('bench_sandbox');
  await createDatabase(server, name);
  url = withDatabase(server, name);
  cleanup = async () => dropDatabase(server, name);
}
const sandbox = openSandbox(url);

try {
  await applyMigrations(url);
  await outcome('SELECT 1 AS warm', 'warm-up');

  console.log(`== ${provider}: one caller floods 16 endless queries; another asks for one row 100 ms later`);
  const flood = Array.from({ length: 16 }, () => outcome(ENDLESS, 'flood'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const other = await outcome('SELECT 1 AS one', 'other');
  const floods = await Promise.all(flood);
  const counts = new Map<string, number>();
  for (const { result } of floods) {
    const key = result.slice(0, 3);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  console.log(`flood: ${[...counts].map(([status, n]) => `${n} × ${status}`).join(', ')}`);
  console.log(
    `flood, refused ones answered within ${Math.max(...floods.filter((f) => f.result.startsWith('429')).map((f) => f.ms)).toFixed(1)} ms`,
  );
  console.log(`other caller's one row: ${other.result} in ${other.ms.toFixed(0)} ms`);

  console.log(`== ${provider}: big answers (rss of this process before → after)`);
  const literal = 'x'.repeat(9000);
  for (const [name, sql] of [
    [
      '1000 rows × 9,000-char literal (~9 MB)',
      `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000) SELECT x, '${literal}' AS v FROM n`,
    ],
    [
      '400 rows × 9,000-char literal (~3.6 MB)',
      `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 400) SELECT x, '${literal}' AS v FROM n`,
    ],
    [
      provider === 'sqlite' ? "printf('%.*c', 100000000, 'x')" : "lpad('x', 100000000)",
      provider === 'sqlite'
        ? "SELECT printf('%.*c', 100000000, 'x') AS v"
        : "SELECT lpad('x', 100000000) AS v",
    ],
  ] as const) {
    const before = process.memoryUsage().rss;
    const result = await outcome(sql, 'big');
    console.log(
      `${name}: ${result.result} in ${result.ms.toFixed(0)} ms; rss ${mb(before)} → ${mb(process.memoryUsage().rss)}`,
    );
  }
} finally {
  await sandbox.close();
  await cleanup();
}
