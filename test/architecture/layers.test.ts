import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, test } from '@jest/globals';
import { fromRoot } from '../../src/projectRoot.ts';

/*
 * The import rule of docs/contributing/architecture.md is biome's noRestrictedImports, per folder (biome.json),
 * run by `npm run lint`. Here the project's own rule set lints probe files laid out like src/, each
 * importing one module: every import the layers forbid is reported, and every one they allow is not.
 */

const dir = mkdtempSync(join(tmpdir(), 'cms-layers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** [file, what it imports, allowed] */
const PROBES: [string, string, boolean][] = [
  // the three imports that ran the wrong way, and the cycle
  ['src/operations/system/readyz.ts', '../../http/problem.ts', false],
  ['src/operations/stl/stlSqlContents.ts', '../../db/sandbox/index.ts', false],
  ['src/state/failPolicy.ts', '../http/logging.ts', false],
  ['src/config.ts', './supervisor.ts', false],
  // the layers, bottom up
  ['src/errorSummary.ts', './db/client.ts', false],
  ['src/db/client.ts', '../generated/prisma/sqlite/client.ts', true],
  ['src/db/client.ts', '../domain/principal.ts', false],
  ['src/db/sandbox/sqliteWall.ts', '../../domain/stl/sql/sandbox.ts', false],
  ['src/db/client.ts', '../state/port.ts', false],
  ['src/state/database.ts', '../db/client.ts', true],
  ['src/state/database.ts', '../errorSummary.ts', true],
  ['src/state/database.ts', '../domain/errors.ts', false],
  ['src/domain/users/list.ts', '../../db/client.ts', true],
  ['src/domain/users/list.ts', '../../state/port.ts', true],
  ['src/domain/users/list.ts', '../../generated/openapi.ts', true],
  ['src/domain/users/list.ts', '../../contract.ts', false],
  ['src/domain/users/list.ts', '../../config.ts', false],
  ['src/domain/users/list.ts', '../../operations/types.ts', false],
  ['src/domain/users/list.ts', '../../http/auth.ts', false],
  ['src/contract.ts', './domain/principal.ts', false],
  ['src/config.ts', './domain/logins/policy.ts', true],
  ['src/config.ts', './http/logging.ts', false],
  ['src/operations/users/listUsers.ts', '../../domain/users/list.ts', true],
  ['src/operations/types.ts', '../db/client.ts', true],
  ['src/operations/types.ts', '../state/port.ts', true],
  ['src/operations/users/listUsers.ts', '../../state/redis.ts', false],
  ['src/operations/users/listUsers.ts', '../../config.ts', true],
  ['src/operations/users/listUsers.ts', '../../worker.ts', false],
  ['src/http/app.ts', '../operations/registry.ts', true],
  ['src/http/app.ts', '../db/sandbox/index.ts', true],
  ['src/http/app.ts', '../worker.ts', false],
  ['src/http/app.ts', '../compose.ts', false],
  ['src/worker.ts', './compose.ts', true],
  ['src/http/app.ts', '../cli/run.ts', false],
  ['src/worker.ts', './http/app.ts', true],
  ['src/cli/run.ts', '../http/app.ts', true],
  // Prisma's generated clients belong to the data layer
  ['src/db/pointReads.ts', '../generated/prisma/postgresql/client.ts', true],
  ['src/db/models.ts', '../generated/prisma/sqlite/browser.ts', true],
  ['src/domain/users/list.ts', '../../generated/prisma/sqlite/client.ts', false],
  ['src/domain/users/list.ts', '../../db/models.ts', true],
  ['src/http/app.ts', '../generated/prisma/postgresql/client.ts', false],
  ['src/operations/types.ts', '../generated/openapi.ts', true],
  ['src/cli/run.ts', '../generated/prisma/sqlite/client.ts', false],
];

/** The diagnostics biome reports for the probes, as `file <- import`. */
function restricted(): Set<string> {
  const config = JSON.parse(readFileSync(fromRoot('biome.json'), 'utf8')) as Record<string, unknown>;
  // The probes are not in a git work tree, and only the import rules matter here.
  delete config.vcs;
  delete config.files;
  delete config.$schema;
  writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
  // One probe file per path (the rules of a root module apply to that file name only), one import a line.
  const byFile = new Map<string, string[]>();
  for (const [file, imported] of PROBES) byFile.set(file, [...(byFile.get(file) ?? []), imported]);
  for (const [file, imports] of byFile) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    const lines = imports.map((imported, index) => `import { x${index} } from '${imported}';`);
    writeFileSync(
      join(dir, file),
      `${lines.join('\n')}\n\nexport const y = [${imports.map((_, index) => `x${index}`).join(', ')}];\n`,
    );
  }
  const run = spawnSync(
    fromRoot('node_modules', '.bin', 'biome'),
    ['lint', '--reporter=json', '--max-diagnostics=none', ...byFile.keys()],
    { cwd: dir, encoding: 'utf8' },
  );
  const report = JSON.parse(run.stdout) as {
    diagnostics: { category: string; location: { path: string; start: { line: number } } }[];
  };
  const found = new Set<string>();
  for (const { category, location } of report.diagnostics) {
    if (category !== 'lint/style/noRestrictedImports') continue;
    const imported = byFile.get(location.path)?.[location.start.line - 1];
    found.add(`${location.path} <- ${imported}`);
  }
  return found;
}

test('biome.json forbids exactly the imports that run against the layers', () => {
  const found = restricted();
  const expected = PROBES.filter(([, , allowed]) => !allowed).map(
    ([file, imported]) => `${file} <- ${imported}`,
  );
  expect([...found].sort()).toEqual(expected.sort());
}, 60_000);
