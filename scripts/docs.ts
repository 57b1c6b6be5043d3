/*
 * `npm run docs` (also run by `npm ci` through `prepare`, and by `npm run gen`): the Redoc page of
 * openapi/cms.yaml as one self-contained file, docs/index.html, which the service serves at /docs.
 * Redoc's scripts are inlined and no web font is asked for, so the page needs no network; telemetry
 * is off in redocly.yaml. The file is built, not kept in git.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DOCS_OUTPUT = join(ROOT, 'docs', 'index.html');

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

export function buildDocs(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'redocly'), ARGS, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`redocly build-docs exited with ${code}\n${output.trim()}`)),
    );
  });
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
