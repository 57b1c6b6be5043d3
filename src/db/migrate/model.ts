import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { PROJECT_ROOT } from '../../projectRoot.ts';
import type { DbProvider } from '../client.ts';

export const PROVIDERS: readonly DbProvider[] = ['sqlite', 'postgresql'];

/** The repository root, also when running compiled from dist/ (src/projectRoot.ts). */
export { PROJECT_ROOT };

export const BASE_SCHEMA_PATH = join(PROJECT_ROOT, 'prisma', 'schema.prisma');

/** Folder of a provider's generated schema and migrations, relative to the project root. */
export function providerDir(provider: DbProvider): string {
  return posix.join('prisma', provider);
}

export function providerSchemaPath(provider: DbProvider, root = PROJECT_ROOT): string {
  return join(root, providerDir(provider), 'schema.prisma');
}

export function migrationsDir(provider: DbProvider, root = PROJECT_ROOT): string {
  return join(root, providerDir(provider), 'migrations');
}

export function readBaseModel(): Promise<string> {
  return readFile(BASE_SCHEMA_PATH, 'utf8');
}

const PLACEHOLDER = 'PROVIDER';
const OUTPUT_LINE = /^(\s*output\s*=\s*")([^"]*)(")/m;

/**
 * Turns the hand-written model (prisma/schema.prisma, provider written as PROVIDER) into the schema
 * of one provider, as it is written to prisma/<provider>/schema.prisma: the provider filled in and
 * the client's output path re-anchored one folder deeper, so it still lands in
 * src/generated/prisma/<provider>.
 */
export function renderProviderSchema(model: string, provider: DbProvider): string {
  const output = OUTPUT_LINE.exec(model);
  if (!output?.[2]?.includes(PLACEHOLDER)) {
    throw new Error(`prisma/schema.prisma: the generator's output must contain ${PLACEHOLDER}`);
  }
  if (!model.includes(`"${PLACEHOLDER}"`)) {
    throw new Error(`prisma/schema.prisma: the datasource provider must be "${PLACEHOLDER}"`);
  }
  const target = output[2].replaceAll(PLACEHOLDER, provider);
  const anchored = posix.isAbsolute(target) ? target : posix.join('..', target);
  const body = model
    .replace(OUTPUT_LINE, (_line, head: string, _path: string, tail: string) => `${head}${anchored}${tail}`)
    .replaceAll(`"${PLACEHOLDER}"`, `"${provider}"`);
  const header =
    '// Generated from prisma/schema.prisma by `npm run gen` (scripts/gen.ts). Do not edit: edit the\n' +
    '// model there and run `npm run gen`.\n\n';
  return header + body;
}
