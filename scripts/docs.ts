/*
 * `npm run docs` (also run by `npm ci` through `prepare`, and by `npm run gen`): the Redoc page of
 * openapi/cms.yaml as one self-contained file, docs/index.html, which the service serves at /docs, with its brotli and gzip copies beside it.
 * Redoc's scripts are inlined and no web font is asked for, so the page needs no network; telemetry
 * is off in redocly.yaml. The file is built, not kept in git.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../src/db/migrate/model.ts';
import { compress, PRECOMPRESSED_SUFFIX } from '../src/http/compression.ts';
import { runTool } from './tools.ts';

export const DOCS_OUTPUT = join(PROJECT_ROOT, 'docs', 'index.html');

const ARGS = [
  'build-docs',
  'openapi/cms.yaml',
  '--inlineBundle',
  '--openapi.disableGoogleFont=true',
  '--title',
  'CMS service API',
  '-o',
  DOCS_OUTPUT,
];

/** The page, then its compressed copies the service sends to clients that accept them. */
export async function buildDocs(): Promise<void> {
  await runTool('redocly', ARGS);
  const page = await readFile(DOCS_OUTPUT);
  for (const coding of ['br', 'gzip'] as const) {
    const compressed = await new Promise<Buffer>((resolve, reject) =>
      compress(page, coding, 'static', (error, result) => (error ? reject(error) : resolve(result))),
    );
    await writeFile(DOCS_OUTPUT + PRECOMPRESSED_SUFFIX[coding], compressed);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildDocs().then(
    () => console.log(`wrote ${DOCS_OUTPUT}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
