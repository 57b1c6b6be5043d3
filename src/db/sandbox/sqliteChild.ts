import Database from 'better-sqlite3';
import type { SandboxMessage, SandboxRequest } from './sqliteProtocol.ts';
import { runStatement } from './sqliteWall.ts';

/*
 * The SQLite sandbox process (started by sqlite.ts): it holds the read-only connection and runs one
 * statement at a time. It is a process of its own because better-sqlite3 cannot interrupt a running
 * statement: a query past its time limit is stopped by killing this process, which the service then
 * replaces. Ends when the service disconnects.
 */

const send = (message: SandboxMessage) => process.send?.(message);

const file = process.argv[2];
// This child process's one connection: the module is the process's entry, not a library.
let db: Database.Database;
try {
  if (!file) throw new Error('no database file given');
  db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('query_only = 1');
} catch (error) {
  send({ type: 'failed-to-open', reason: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}

process.on('message', (request: SandboxRequest) => {
  send({
    type: 'outcome',
    id: request.id,
    outcome: runStatement(db, request.sql, request, request.databaseWall),
  });
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
