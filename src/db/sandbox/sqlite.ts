import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SandboxUnavailable } from './errors.ts';
import type { ExecuteOptions, ExecuteOutcome, SqlExecutor } from './executor.ts';
import { SandboxGate } from './gate.ts';
import type { SandboxMessage, SandboxRequest } from './sqliteProtocol.ts';

/*
 * stl/sqlContents on SQLite: statements run in a child process (sqliteChild.ts) holding its own
 * read-only connection to the service's file. better-sqlite3 has no way to interrupt a running
 * statement (a worker thread cannot be terminated while SQLite runs either), so the time limit is
 * kept by killing the process; the next query starts a fresh one. The service's event loop never
 * waits on SQLite meanwhile. Statements run one at a time, in arrival order, behind a gate that
 * bounds the queue and each caller's share of it (gate.ts).
 */

/** Queries that may wait behind the running one, and each caller's places (running or waiting). */
export const SQLITE_GATE = { capacity: 1, maxWaiting: 4, perCaller: 2 } as const;

/**
 * The child is run the way the service itself runs: compiled JavaScript beside this file under
 * dist/ (`npm start`), or TypeScript through tsx (`npm run dev`, tests).
 */
const COMPILED = import.meta.url.endsWith('.js');
const CHILD = fileURLToPath(new URL(COMPILED ? './sqliteChild.js' : './sqliteChild.ts', import.meta.url));
const CHILD_EXEC_ARGV = COMPILED
  ? []
  : ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];

export class SqliteSandbox implements SqlExecutor {
  readonly dialect = 'sqlite' as const;
  private child: Promise<ChildProcess> | undefined;
  private nextId = 1;
  private readonly file: string;
  readonly gate = new SandboxGate(SQLITE_GATE);

  constructor(file: string) {
    this.file = resolve(file);
  }

  execute(sql: string, options: ExecuteOptions): Promise<ExecuteOutcome> {
    return this.gate.run(options.caller, options.timeoutMs, () => this.runOne(sql, options));
  }

  private async runOne(sql: string, options: ExecuteOptions): Promise<ExecuteOutcome> {
    const child = await this.start();
    const request: SandboxRequest = {
      id: this.nextId++,
      sql,
      maxRows: options.maxRows,
      maxBytes: options.maxBytes,
      databaseWall: options.databaseWall,
    };
    return new Promise<ExecuteOutcome>((resolveOutcome, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        child.channel?.unref();
      };
      const onMessage = (message: SandboxMessage) => {
        if (message.type !== 'outcome' || message.id !== request.id) return;
        done();
        resolveOutcome(message.outcome);
      };
      const onExit = () => {
        done();
        reject(new SandboxUnavailable('the SQLite sandbox process ended unexpectedly'));
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.channel?.ref();
      if (options.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          done();
          this.stop(child);
          resolveOutcome({ status: 'timeout' });
        }, options.timeoutMs);
      }
      child.send(request);
    });
  }

  /** The running process, or a new one once it has opened the database. */
  private start(): Promise<ChildProcess> {
    if (this.child !== undefined) return this.child;
    const started: Promise<ChildProcess> = new Promise<ChildProcess>((resolveChild, reject) => {
      let settled = false;
      const child = fork(CHILD, [this.file], {
        execArgv: CHILD_EXEC_ARGV,
        serialization: 'advanced',
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        if (this.child === started) this.child = undefined;
        child.kill('SIGKILL');
        reject(error);
      };
      child.once('error', fail);
      child.once('exit', () => fail(new SandboxUnavailable('the SQLite sandbox process did not start')));
      child.once('message', (message: SandboxMessage) => {
        if (settled) return;
        if (message.type !== 'ready') {
          fail(new SandboxUnavailable('the SQLite sandbox could not open the database'));
          return;
        }
        settled = true;
        child.removeAllListeners('exit');
        child.removeAllListeners('error');
        // Only this process's own promise is forgotten: a replacement may already be starting.
        child.on('exit', () => {
          if (this.child === started) this.child = undefined;
        });
        child.unref();
        child.channel?.unref();
        resolveChild(child);
      });
    });
    this.child = started;
    return started;
  }

  private stop(child: ChildProcess): void {
    this.child = undefined;
    child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    const pending = this.child;
    this.child = undefined;
    if (pending === undefined) return;
    const child = await pending.catch(() => undefined);
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((done) => {
      child.once('exit', () => done());
      child.kill('SIGKILL');
    });
  }
}
