import { providerOf, sqliteFilePath } from '../client.ts';
import type { SqlExecutor } from './executor.ts';
import type { SandboxGate } from './gate.ts';
import { PostgresSandbox } from './postgres.ts';
import { SqliteSandbox } from './sqlite.ts';

/*
 * The sandbox of one database: a small pg pool, or the SQLite sandbox process, both started on
 * first use (most processes never run a sandboxed query). Whoever opens one closes it: a serving
 * process's services own theirs (src/compose.ts).
 */

export type Sandbox = SqlExecutor & { readonly gate: SandboxGate; close(): Promise<void> };

export function openSandbox(databaseUrl: string): Sandbox {
  return providerOf(databaseUrl) === 'sqlite'
    ? new SqliteSandbox(sqliteFilePath(databaseUrl))
    : new PostgresSandbox(databaseUrl);
}
