import type { ExecuteOutcome } from './executor.ts';

/* Messages between the service and its SQLite sandbox process (sqlite.ts ⇄ sqliteChild.ts). */

export interface SandboxRequest {
  id: number;
  sql: string;
  maxRows: number | undefined;
  maxBytes: number | undefined;
  databaseWall: boolean;
}

export type SandboxMessage =
  | { type: 'ready' }
  | { type: 'failed-to-open'; reason: string }
  | { type: 'outcome'; id: number; outcome: ExecuteOutcome };
