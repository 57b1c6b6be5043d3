/** Raised for every failed migration command; the message says what the database or engine said. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The one sentence for a database that another process keeps locked while migrations must run. */
export function databaseInUse(): MigrationError {
  return new MigrationError(
    'the database is locked by another process (a running server or migration); stop it, then apply the migrations with `npm run db:migrate`',
  );
}
