/*
 * The SQLite inside better-sqlite3, compiled by this project's `prepare` step rather than by
 * better-sqlite3's own install script (denied in package.json's `allowScripts`). Its script would
 * first try to download a prebuilt binary from GitHub (unreachable from these machines), then
 * compile SQLite at -O3 with a dozen extensions: most of a fresh `npm ci`.
 * Here SQLite is compiled without the extensions the service never uses — full-text search 3/4/5,
 * R*Tree, Geopoly, the dbstat table, percentile — at -O1 by `prepare`, beside the docs and
 * TypeScript builds, so that a fresh `npm ci` stays under a minute. `--optimize` compiles at -O2
 * instead (SQLite's own default, a longer compile): SQLite-bound queries (long scans, counts) run
 * faster than at -O1, and -O3 adds nothing measurable (bench/RUNTIME.md, "The SQLite build").
 *
 * The flags are appended after better-sqlite3's own (`CFLAGS` comes last on node-gyp's compile
 * line), so `-U` removes only those extensions and every other option of better-sqlite3's build
 * stays: foreign keys on, double-quoted strings off, STAT4, threadsafe=2, ...
 * test/db/sqliteBuild.test.ts reads the options back from the library that loads.
 *
 * `npm run sqlite:build [-- --optimize]` rebuilds it (after switching Node versions, or for the
 * faster build); a later `prepare` keeps whichever build matches the package version and Node's ABI.
 *
 * Only better-sqlite3 12.x (`better-sqlite3-12`) is compiled, for a Node.js below Node-API 10; from
 * Node-API 10 on, the project loads 13.x, whose own prebuilt binary needs no compile
 * (packages/better-sqlite3, docs/contributing/node-versions.md), so `prepare` compiles nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import driver from 'better-sqlite3/driver';
import { runCommand } from './tools.ts';

/** The extensions left out; each is an `SQLITE_ENABLE_…` define of better-sqlite3's build. */
export const SQLITE_OMITTED_EXTENSIONS = [
  'FTS3',
  'FTS3_PARENTHESIS',
  'FTS4',
  'FTS5',
  'GEOPOLY',
  'RTREE',
  'DBSTAT_VTAB',
  'PERCENTILE',
] as const;

function cflags(optimize: boolean): string {
  return [
    optimize ? '-O2' : '-O1',
    ...SQLITE_OMITTED_EXTENSIONS.map((name) => `-USQLITE_ENABLE_${name}`),
  ].join(' ');
}

/** The release this script compiles; the one that loads is `driver`. */
const COMPILED_DRIVER = 'better-sqlite3-12';
const packageDir = dirname(createRequire(import.meta.url).resolve(`${COMPILED_DRIVER}/package.json`));
const binary = join(packageDir, 'build', 'Release', 'better_sqlite3.node');
/** What the binary was built for and with; a later `prepare` (npm install) skips an identical build. */
const stampPath = join(packageDir, 'build', 'cms-build.json');

interface Stamp {
  version: string;
  abi: string;
  cflags: string;
}

function target(): Omit<Stamp, 'cflags'> {
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  return { version, abi: process.versions.modules };
}

function isCurrent(): boolean {
  if (!existsSync(binary) || !existsSync(stampPath)) return false;
  const built = JSON.parse(readFileSync(stampPath, 'utf8')) as Stamp;
  const wanted = target();
  return built.version === wanted.version && built.abi === wanted.abi;
}

export async function buildSqlite(
  options: { force?: boolean; optimize?: boolean } = {},
): Promise<'built' | 'current' | 'prebuilt'> {
  if (driver !== COMPILED_DRIVER) return 'prebuilt';
  if (!options.force && isCurrent()) return 'current';
  const CFLAGS = cflags(options.optimize ?? false);
  // node-gyp is npm's own (npm puts it on PATH for scripts); it finds Node's headers through npm's
  // `nodedir` setting where one is set, as better-sqlite3's script would.
  await runCommand('node-gyp', ['rebuild', '--release', '--jobs', 'max'], {
    cwd: packageDir,
    env: { CFLAGS },
  });
  writeFileSync(stampPath, JSON.stringify({ ...target(), cflags: CFLAGS } satisfies Stamp));
  return 'built';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildSqlite({ force: true, optimize: process.argv.includes('--optimize') }).then(
    (outcome) =>
      console.log(
        outcome === 'prebuilt'
          ? `nothing to build: Node.js ${process.version} loads ${driver}, which is prebuilt`
          : `built ${binary}`,
      ),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
