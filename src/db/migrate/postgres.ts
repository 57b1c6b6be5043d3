import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Server for the temporary databases behind createMigration and checkDrift. */
export function migrationServerUrl(): string {
  return process.env.MIGRATION_POSTGRES_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
}

/** The same server and credentials, another database. */
export function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

export function databaseName(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
}

/** A name no other process picks: temporary databases of parallel runs share one server. */
export function uniqueDatabaseName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(6).toString('hex')}`;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function createDatabase(serverUrl: string, name: string): Promise<void> {
  return onServer(serverUrl, `CREATE DATABASE ${quoteIdentifier(name)}`);
}

/**
 * Creates the database of a URL when it does not exist yet, as `prisma migrate deploy` does, through
 * the server's `postgres` database. Returns whether it was created.
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
    return false;
  } catch (error) {
    // invalid_catalog_name: anything else (server down, bad password) is the engine's to report.
    if ((error as { code?: string }).code !== '3D000') return false;
  } finally {
    await probe.end().catch(() => {});
  }
  try {
    await createDatabase(withDatabase(databaseUrl, 'postgres'), databaseName(databaseUrl));
  } catch (error) {
    // duplicate_database: another process starting at the same moment created it.
    if ((error as { code?: string }).code === '42P04') return false;
    throw error;
  }
  return true;
}

/** FORCE: a connection a failed command left behind must not keep the database alive. */
export function dropDatabase(serverUrl: string, name: string): Promise<void> {
  return onServer(serverUrl, `DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
}

/**
 * A pg client class whose result columns of PostgreSQL's internal `"char"` type (OID 18) are
 * declared as text: the schema engine's catalog queries return such columns and
 * @prisma/adapter-pg refuses to decode them. The value itself is already text on the wire.
 */
export class CatalogSafeClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.connection.prependListener('rowDescription', (message: { fields?: { dataTypeID: number }[] }) => {
      for (const field of message.fields ?? []) {
        if (field.dataTypeID === 18) field.dataTypeID = 25;
      }
    });
  }
}
