import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import ts from 'typescript';
import { PROJECT_ROOT } from '../../src/db/migrate/model.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { scratchPrefix } from '../support/run.ts';

/*
 * The published client as a user gets it: `npm pack` of client/ (its prepack builds dist/), the
 * tarball installed into an empty project outside this repository (so nothing resolves from the
 * repository's node_modules: a dependency the package forgot to declare would fail here), a
 * consumer file type-checked there with `tsc --noEmit` against the installed declarations, then
 * compiled and run by plain node against the running service.
 *
 * The pack runs in a copy of client/ (its node_modules linked to the root's, for tsc and the
 * build's types), so two runs at once (SQLite and PostgreSQL) never share a dist/ being rebuilt.
 * The install takes openapi-fetch from npm's cache when it is there (`npm ci` of the root puts it
 * there): --prefer-offline makes that offline-safe without stopping a first run from fetching it.
 */

const CLIENT_DIR = join(PROJECT_ROOT, 'client');
const BIN = join(PROJECT_ROOT, 'node_modules', '.bin');

let app: TestApp;
let typed: TypedClient;
let key: string;
let scratch: string;

/**
 * The environment of the child processes: npm's own variables of a surrounding `npm test` (prefix,
 * package, lifecycle) would point the inner npm at this repository, and jest's NODE_OPTIONS is not
 * the consumer's.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== 'NODE_OPTIONS') env[name] = value;
  }
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
}

/** Runs a command; resolves with its stdout, rejects with everything it printed. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, env: childEnv(), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents', 'Channels']));
  typed = await startClient(app, key);
  scratch = await mkdtemp(scratchPrefix('client'));
});
afterAll(async () => {
  await typed?.close();
  await app?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** What the consumer prints: the values it read through the package. */
interface ConsumerReport {
  listed: { totalCount: number; ids: number[] };
  got: { id: number; title: string };
  updated: { id: number; title: string; hits: number };
  deleted: { id: number; title: string; isChecked: string };
  afterDelete: { name: string; status: number; type: string };
  refused: { status: number; type: string; paths: string[] };
  channel: { status: number; children: string[] };
}

function consumerSource(baseUrl: string, apiKey: string): string {
  return `import {
  CmsProblemError,
  type Content,
  createCmsClient,
  deleteContent,
  getContent,
  listContents,
  updateContent,
} from '@cms/client';

const cms = createCmsClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(apiKey)} });

const listing = await listContents(cms, {
  siteId: 1,
  channelId: 2,
  wheres: [{ column: 'hits', operator: '>=', value: 5 }],
  orders: [{ column: 'hits', desc: true }],
  perPage: 10,
});
const got: Content = await getContent(cms, { siteId: 1, channelId: 2, id: 2 });
const updated = await updateContent(cms, got, { title: 'Beta program, updated', hits: 26 });
const deleted = await deleteContent(cms, { siteId: 1, channelId: 2, id: 1 });

async function problemOf(call: Promise<unknown>): Promise<CmsProblemError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof CmsProblemError) return error;
    throw error;
  }
  throw new Error('expected a problem');
}
const gone = await problemOf(getContent(cms, { siteId: 1, channelId: 2, id: 1 }));
const refused = await problemOf(listContents(cms, { siteId: 1, perPage: 100000 }));
const channel = await cms.GET('/api/v1/channels/{siteId}/{channelId}', {
  params: { path: { siteId: 1, channelId: 1 } },
});

// Never called: each line must fail to compile, which proves the installed declarations are the
// contract's types and not \`any\` (an unused @ts-expect-error is itself an error).
export async function mistakes(): Promise<void> {
  // @ts-expect-error channelID is not a field of the list request (channelId is)
  await listContents(cms, { siteId: 1, channelID: 2 });
  // @ts-expect-error a where rule has column, operator and value
  await listContents(cms, { siteId: 1, wheres: [{ column: 'hits', op: '>', value: 1 }] });
  // @ts-expect-error the content id is missing
  await getContent(cms, { siteId: 1, channelId: 2 });
  // @ts-expect-error hits is a number
  await updateContent(cms, got, { hits: 'many' });
  // @ts-expect-error a content has a title, no name
  console.log(got.name);
  // @ts-expect-error the contract has no such path
  await cms.GET('/api/v1/content/1/2/2');
  // @ts-expect-error one credential or the other
  createCmsClient({ baseUrl: 'http://x', apiKey: 'k', bearerToken: 't' });
}

const report = {
  listed: { totalCount: listing.totalCount, ids: listing.contents.map((content) => content.id) },
  got: { id: got.id, title: got.title },
  updated: { id: updated.id, title: updated.title, hits: updated.hits },
  deleted: { id: deleted.id, title: deleted.title, isChecked: deleted.isChecked },
  afterDelete: { name: gone.name, status: gone.status, type: gone.type },
  refused: {
    status: refused.status,
    type: refused.type,
    paths: (refused.problem.errors ?? []).map((item) => item.path),
  },
  channel: {
    status: channel.response.status,
    children: (channel.data?.children ?? []).map((child) => child.label),
  },
};
console.log(JSON.stringify(report));
`;
}

test('npm pack gives a tarball that installs, type-checks and calls the service', async () => {
  // Pack from a copy (see the comment at the top); dist/ is built by the package's prepack.
  const packageDir = join(scratch, 'package');
  await mkdir(packageDir);
  for (const entry of ['package.json', 'README.md', 'tsconfig.json', 'src']) {
    await cp(join(CLIENT_DIR, entry), join(packageDir, entry), { recursive: true });
  }
  await symlink(join(PROJECT_ROOT, 'node_modules'), join(packageDir, 'node_modules'), 'dir');
  const [packed] = JSON.parse(
    await run('npm', ['pack', '--json', '--pack-destination', scratch], packageDir),
  ) as { filename: string; files: { path: string }[] }[];
  if (!packed) throw new Error('npm pack reported nothing');
  const files = packed.files.map((file) => file.path).sort();
  expect(files).toEqual([
    'README.md',
    'dist/generated/openapi.d.ts',
    'dist/generated/openapi.js',
    'dist/index.d.ts',
    'dist/index.js',
    'package.json',
  ]);

  // An empty project next to the tarball, outside the repository.
  const consumerDir = join(scratch, 'consumer');
  await mkdir(consumerDir);
  await writeFile(
    join(consumerDir, 'package.json'),
    JSON.stringify({ name: 'cms-client-consumer', private: true, type: 'module' }),
  );
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-package-lock',
      '--ignore-scripts',
      '--loglevel=error',
      join(scratch, packed.filename),
    ],
    consumerDir,
  );
  const installed = JSON.parse(
    await readFile(join(consumerDir, 'node_modules', '@cms', 'client', 'package.json'), 'utf8'),
  ) as { name: string; dependencies: Record<string, string> };
  // The openapi-fetch it declares is the one the service's tests run the client with.
  const root = JSON.parse(await readFile(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  expect(root.devDependencies['openapi-fetch']).toMatch(/^\d+\.\d+\.\d+$/);
  expect([installed.name, installed.dependencies]).toEqual([
    '@cms/client',
    { 'openapi-fetch': root.devDependencies['openapi-fetch'] },
  ]);
  expect((await readdir(join(consumerDir, 'node_modules'))).sort()).toEqual(
    expect.arrayContaining(['@cms', 'openapi-fetch']),
  );

  // The consumer's own strict settings; its declarations come from the installed package only.
  // skipLibCheck as `tsc --init` sets it (checking every declaration file triples the time); the
  // consumer's expected-error lines still fail the check if the package's types degraded to `any`.
  const source = consumerSource(typed.baseUrl, key);
  await writeFile(join(consumerDir, 'consumer.ts'), source);
  // The examples of the package's README must compile too (they are checked, not run: they name
  // an example host). Its code blocks form one module; `process` is declared for the API key.
  const readme = await readFile(join(CLIENT_DIR, 'README.md'), 'utf8');
  const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
  expect(examples.length).toBeGreaterThanOrEqual(2);
  await writeFile(
    join(consumerDir, 'readme.ts'),
    ['declare const process: { env: Record<string, string | undefined> };', ...examples].join('\n'),
  );
  await writeFile(
    join(consumerDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
      files: ['consumer.ts', 'readme.ts'],
    }),
  );
  await run(join(BIN, 'tsc'), ['--noEmit', '-p', 'tsconfig.json'], consumerDir);

  // Type-checked above; here only compiled to JavaScript, and run by plain node.
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  });
  await writeFile(join(consumerDir, 'consumer.js'), outputText);
  const output = await run(process.execPath, ['consumer.js'], consumerDir);
  const report = JSON.parse(output) as ConsumerReport;

  // Channel 2 and its descendant 3, hits >= 5, by hits descending: 2 (25), 1 (10), 3 (5).
  expect(report.listed).toEqual({ totalCount: 3, ids: [2, 1, 3] });
  expect(report.got).toEqual({ id: 2, title: 'Beta program' });
  expect(report.updated).toEqual({ id: 2, title: 'Beta program, updated', hits: 26 });
  expect(report.deleted).toEqual({ id: 1, title: 'Alpha release notes', isChecked: 'True' });
  expect(report.afterDelete).toEqual({
    name: 'CmsProblemError',
    status: 404,
    type: 'https://cms.example/problems/not-found',
  });
  expect(report.refused).toEqual({
    status: 400,
    type: 'https://cms.example/problems/validation',
    paths: ['/body/perPage'],
  });
  // The direct children of the root channel, by taxis: Products (1), News (2).
  expect(report.channel).toEqual({ status: 200, children: ['Products', 'News'] });

  // The calls reached the database.
  const [updatedRow, deletedRow] = await Promise.all([
    app.db.content.findUniqueOrThrow({ where: { id: 2 } }),
    app.db.content.findUniqueOrThrow({ where: { id: 1 } }),
  ]);
  expect([updatedRow.title, updatedRow.hits, deletedRow.recycled]).toEqual([
    'Beta program, updated',
    26,
    true,
  ]);
  // Pack, install and two compilations: ~30 s on a loaded two-core machine; the limit only stops a hang.
}, 180_000);
