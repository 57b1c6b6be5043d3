import { providerOf, sqliteFilePath } from '../client.ts';
import type { SqlExecutor } from './executor.ts';
import type { SandboxGate } from './gate.ts';
import { PostgresSandbox } from './postgres.ts';
import { SqliteSandbox } from './sqlite.ts';

/*
 * One sandbox per database, made on first use (most processes never run a sandboxed query) and
 * kept: a small pg pool, or the SQLite sandbox process. closeSandboxes() ends them at shutdown.
 */

type Sandbox = SqlExecutor & { readonly gate: SandboxGate; close(): Promise<void> };

const sandboxes = new Map<string, Sandbox>();

export function sandboxFor(databaseUrl: string): Sandbox {
  let sandbox = sandboxes.get(databaseUrl);
  if (sandbox === undefined) {
    sandbox =
      providerOf(databaseUrl) === 'sqlite'
        ? new SqliteSandbox(sqliteFilePath(databaseUrl))
        : new PostgresSandbox(databaseUrl);
    sandboxes.set(databaseUrl, sandbox);
  }
  return sandbox;
}

export async function closeSandboxes(): Promise<void> {
  const open = [...sandboxes.values()];
  sandboxes.clear();
  await Promise.all(open.map((sandbox) => sandbox.close()));
}
