import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CostlyReadReply, CostlyReadRequest, CostlyReadsSetup } from './costlyReads.ts';
import { keptByText } from './keptStatements.ts';
import { installTimeLimit } from './sqliteTimeLimit.ts';

/*
 * The thread of src/db/costlyReads.ts: its own read-only connection to the service's SQLite file,
 * with the time-limit functions, running one statement at a time in arrival order. While it works,
 * the worker's event loop goes on answering every other request.
 */

const port = parentPort;
if (port === null) throw new Error('costlyReadsThread.ts runs as a worker thread');
const { file, limitMs, cacheKib } = workerData as CostlyReadsSetup;
// This thread's one connection: the module is the thread's entry, not a library.
const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('query_only = 1');
if (cacheKib !== undefined) db.pragma(`cache_size = -${cacheKib}`);
// Reads issued while the thread was starting (loading its modules, opening the file) are timed
// from now: the start is the thread's cost, not the query's.
installTimeLimit(db, limitMs, Date.now());

// The statements of the texts read most recently, prepared once each: the list's few texts come
// again and again, with other values bound.
const KEPT_STATEMENTS = 128;
const statementOf = keptByText((sql) => db.prepare(sql), KEPT_STATEMENTS);

port.on('message', ({ id, sql, params }: CostlyReadRequest) => {
  let reply: CostlyReadReply;
  try {
    reply = { id, rows: statementOf(sql).all(...params) as Record<string, unknown>[] };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    reply = {
      id,
      error: {
        code: typeof code === 'string' ? code : 'SQLITE_ERROR',
        message: error instanceof Error ? error.message : String(error),
      },
    };
  }
  port.postMessage(reply);
});
