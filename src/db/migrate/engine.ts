import { bindMigrationAwareSqlAdapterFactory, type ErrorRegistry } from '@prisma/driver-adapter-utils';
import type { SchemaEngine, SchemaFilter } from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { EngineConnection } from './adapters.ts';
import { databaseInUse, MigrationError } from './errors.ts';
import { capturingPanics, loadSchemaEngine } from './wasm.ts';

export const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

export interface Datamodel {
  /** Shown in the engine's messages. */
  path: string;
  content: string;
}

export { MigrationError } from './errors.ts';

/**
 * Runs one command on a fresh engine (an engine carries state from command to command that breaks
 * later ones) and then releases the engine and every connection it opened.
 */
export async function withEngine<T>(
  connection: EngineConnection,
  datamodel: Datamodel,
  command: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const { SchemaEngine } = await loadSchemaEngine();
  const factory = bindMigrationAwareSqlAdapterFactory(connection.factory);
  const log = (line: string) => {
    if (process.env.MIGRATE_DEBUG) process.stderr.write(`${line.trimEnd()}\n`);
  };
  let engine: SchemaEngine | undefined;
  const release = async () => {
    engine?.free();
    engine = undefined;
    await connection.close();
  };
  let result: T;
  try {
    result = await capturingPanics(async () => {
      engine = await SchemaEngine.new({ datamodels: [[datamodel.path, datamodel.content]] }, log, factory);
      return await command(engine);
    });
  } catch (error) {
    const failure = explain(error, factory.errorRegistry);
    // A failed cleanup must not hide the failure that caused it.
    await release().catch(() => {});
    throw failure;
  }
  await release();
  return result;
}

const EXTERNAL_ERROR = /External error id#(\d+)/g;
const SPAN_TRACE = /\n\s*0: [\s\S]*$/;
const MIGRATION_NAME = /migration_name="([^"]+)"/;
const BUSY = /unknown variant `SocketTimeout`|SQLITE_BUSY|database is locked/;

/**
 * Engine errors name JavaScript-side failures only as "External error id#N" (the bound factory
 * keeps the real error under that id), and may end with a Rust span trace, reduced here to the
 * name of the migration that failed.
 */
function explain(error: unknown, registry: ErrorRegistry): MigrationError {
  const raw = messageOf(error);
  // A SQLite file held by another connection: the better-sqlite3 adapter reports SQLITE_BUSY as a
  // `SocketTimeout`, which this engine cannot even decode; its message would be noise.
  if (BUSY.test(raw)) return databaseInUse();
  const migration = MIGRATION_NAME.exec(raw)?.[1];
  const lines = [raw.replace(SPAN_TRACE, '').trim()];
  for (const match of raw.matchAll(EXTERNAL_ERROR)) {
    const record = registry.consumeError(Number(match[1]));
    if (record) lines.push(messageOf(record.error));
  }
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? `${String(error.code)}: ` : '';
  const where = migration ? `migration ${migration}: ` : '';
  return new MigrationError(`${where}${code}${lines.join('\n')}`, { cause: error });
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return String(error);
}
