/**
 * `npm run gen`: everything generated from the two sources of truth.
 *   prisma/schema.prisma -> prisma/{sqlite,postgresql}/schema.prisma -> src/generated/prisma/{sqlite,postgresql}
 *   openapi/cms.yaml     -> src/generated/openapi.ts, and the same file in client/src/generated/
 *   openapi/cms.yaml + src/operations/registry.ts -> the operation table of docs/api/operations.md
 * `npm run gen:check`: generates into a scratch copy and exits 1, listing every file that differs
 * from the working tree (CI fails when committed output is stale or hand-edited).
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import {
  PROJECT_ROOT,
  PROVIDERS,
  providerSchemaPath,
  readBaseModel,
  renderProviderSchema,
} from '../src/db/migrate/model.ts';
import { buildDocs } from './docs.ts';
import { OPERATION_TABLE_PAGE, renderOperationTable, withOperationTable } from './operationTable.ts';
import { runTool as run } from './tools.ts';

const GENERATED = join('src', 'generated');
/** The client package ships its own copy of the types: its tarball holds nothing of src/. */
const CLIENT_GENERATED = join('client', 'src', 'generated');
/** Folders holding only generated files, relative to the root: the drift check compares all of them. */
const GENERATED_DIRS = [GENERATED, CLIENT_GENERATED];
const CONTRACT = join(PROJECT_ROOT, 'openapi', 'cms.yaml');
const OPERATION_PAGE = join(PROJECT_ROOT, OPERATION_TABLE_PAGE);

/**
 * docs/api/operations.md as it should be: its table rendered from the contract and the registry.
 * Imported late: the registry loads every handler, hence the generated clients.
 */
async function expectedOperationPage(): Promise<string> {
  const [{ contract }, { handlers }] = await Promise.all([
    import('../src/contract.ts'),
    import('../src/operations/registry.ts'),
  ]);
  const table = renderOperationTable(contract.operations, (id) => id in handlers);
  return withOperationTable(await readFile(OPERATION_PAGE, 'utf8'), table);
}

/** Writes every generated file under `root`, which mirrors the project's layout. */
async function generate(root: string): Promise<void> {
  const model = await readBaseModel();
  const tasks = PROVIDERS.map(async (provider) => {
    const schemaPath = providerSchemaPath(provider, root);
    await mkdir(dirname(schemaPath), { recursive: true });
    await writeFile(schemaPath, renderProviderSchema(model, provider));
    // A model removed from the schema must not leave its old client file behind.
    await rm(join(root, GENERATED, 'prisma', provider), { recursive: true, force: true });
    await run('prisma', ['generate', '--schema', schemaPath], {
      // Generation runs on WebAssembly; the CLI only insists that an engine path exists.
      PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
      CHECKPOINT_DISABLE: '1',
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    });
  });
  const openapiOut = join(root, GENERATED, 'openapi.ts');
  await mkdir(dirname(openapiOut), { recursive: true });
  tasks.push(
    run('openapi-typescript', [CONTRACT, '--output', openapiOut]).then(async () => {
      await mkdir(join(root, CLIENT_GENERATED), { recursive: true });
      await copyFile(openapiOut, join(root, CLIENT_GENERATED, 'openapi.ts'));
    }),
  );
  await Promise.all(tasks);
}

/** Relative paths of all files under `dir` (none when it does not exist). */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    },
  );
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

async function readOrNull(path: string): Promise<Buffer | null> {
  return readFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
}

/** Every generated file, relative to the project root, that is not the same in `fresh` and the tree. */
async function differences(fresh: string): Promise<string[]> {
  const tracked = new Set<string>(
    PROVIDERS.map((provider) => relative(PROJECT_ROOT, providerSchemaPath(provider))),
  );
  for (const root of [fresh, PROJECT_ROOT]) {
    for (const dir of GENERATED_DIRS) {
      for (const file of await listFiles(join(root, dir))) tracked.add(join(dir, file));
    }
  }
  const problems: string[] = [];
  for (const file of [...tracked].sort()) {
    const [expected, actual] = await Promise.all([
      readOrNull(join(fresh, file)),
      readOrNull(join(PROJECT_ROOT, file)),
    ]);
    if (expected === null) problems.push(`extra (not generated): ${file}`);
    else if (actual === null) problems.push(`missing: ${file}`);
    else if (!expected.equals(actual)) problems.push(`differs: ${file}`);
  }
  return problems;
}

async function main(): Promise<number> {
  if (!process.argv.includes('--check')) {
    await generate(PROJECT_ROOT);
    await writeFile(OPERATION_PAGE, await expectedOperationPage());
    // The docs page the service serves at /docs (not in git: `npm ci` builds it too).
    await buildDocs();
    console.log(
      `generated ${PROVIDERS.map((p) => `prisma/${p}/schema.prisma`).join(', ')}, ${GENERATED}/, ${CLIENT_GENERATED}/, docs/index.html and the operation table of ${OPERATION_TABLE_PAGE}`,
    );
    return 0;
  }
  // Inside the project, so that the generators resolve this project's node_modules.
  await mkdir(join(PROJECT_ROOT, '.tmp'), { recursive: true });
  const scratch = await mkdtemp(join(PROJECT_ROOT, '.tmp', 'gen-check-'));
  try {
    await generate(scratch);
    const problems = await differences(scratch);
    if ((await expectedOperationPage()) !== (await readFile(OPERATION_PAGE, 'utf8'))) {
      problems.push(`differs: ${OPERATION_TABLE_PAGE} (operation table)`);
    }
    if (problems.length === 0) {
      console.log('generated files are up to date');
      return 0;
    }
    console.error(`generated files are out of date (run \`npm run gen\`):\n  ${problems.join('\n  ')}`);
    return 1;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
