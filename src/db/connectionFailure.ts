import { existsSync } from 'node:fs';
import { providerOfUrl, sqliteFilePath } from './client.ts';
/*
 * A database that cannot be reached or refuses the service, said in one sentence that names
 * DATABASE_URL with its password masked: what an operator reads when `npm start` or `npm run cms`
 * cannot begin (docs/operating/errors.md). Recognised by the drivers' codes, never by message text.
 */

/** The URL as an operator may see it: the password, if any, replaced by `***`. */
export function maskedDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password === '') return databaseUrl;
    url.password = '***';
    return url.toString();
  } catch {
    // Not a URL with an authority (a SQLite `file:` path): it holds no password.
    return databaseUrl;
  }
}

const SOCKET_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the connection was closed',
  ETIMEDOUT: 'no answer',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
};

/** The error's `code`, or that of an error it wraps (`cause`, a list of `errors`). */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  const queue: unknown[] = [error];
  for (let seen = 0; queue.length > 0 && seen < 8; seen++) {
    const next = queue.shift();
    if (typeof next !== 'object' || next === null) continue;
    const { code, cause, errors } = next as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    queue.push(cause, ...(Array.isArray(errors) ? errors : []));
  }
  return codes;
}

/** The sentence for a failure to reach or enter the database, or undefined for any other error. */
export function connectionFailureSentence(error: unknown, databaseUrl: string): string | undefined {
  if (error instanceof MissingDatabase) return error.message;
  const where = `${maskedDatabaseUrl(databaseUrl)} (DATABASE_URL)`;
  for (const code of codesOf(error)) {
    const reason = SOCKET_REASONS[code];
    if (reason) return `cannot reach the database at ${where}: ${reason}`;
    // PostgreSQL's invalid_password, invalid_authorization_specification, invalid_catalog_name.
    if (code === '28P01') return `the database at ${where} refused the password`;
    if (code === '28000') return `the database at ${where} refused the role`;
    if (code === '3D000') return `database ${databaseName(databaseUrl)} does not exist (DATABASE_URL)`;
  }
  return undefined;
}

function databaseName(databaseUrl: string): string {
  try {
    return `'${decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''))}'`;
  } catch {
    return maskedDatabaseUrl(databaseUrl);
  }
}

/** A database that is not there: a PostgreSQL database or a SQLite file that does not exist. */
export class MissingDatabase extends Error {
  override name = 'MissingDatabase';
}

/**
 * Refuses a database that does not exist instead of creating it: the migration engine would create
 * a PostgreSQL database whose name was mistyped, and SQLite a new file (and the migrations its
 * folder), and work on it. PostgreSQL is asked once (a connection, then gone); a SQLite file must
 * be there. Throws MissingDatabase, or the driver's error when the server cannot be reached.
 */
export async function assertDatabaseExists(databaseUrl: string): Promise<void> {
  if (providerOfUrl(databaseUrl) === 'sqlite') {
    const file = sqliteFilePath(databaseUrl);
    if (!existsSync(file)) throw new MissingDatabase(`database file ${file} does not exist (DATABASE_URL)`);
    return;
  }
  const { default: driver } = await import('pg');
  const client = new driver.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (error) {
    if (codesOf(error).includes('3D000'))
      throw new MissingDatabase(`database ${databaseName(databaseUrl)} does not exist (DATABASE_URL)`);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
