import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The repository root, where the files read at run time live (openapi/cms.yaml, prisma/ with the
 * migrations, docs/index.html). The code runs from src/ (tsx, jest) or compiled from dist/src/
 * (`npm start`), so the root is not a fixed number of folders up: it is the nearest folder above
 * this file that holds package.json (dist/ has none).
 */
function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** A path under the repository root. */
export function fromRoot(...parts: string[]): string {
  return join(PROJECT_ROOT, ...parts);
}
