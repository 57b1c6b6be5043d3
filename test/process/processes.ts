import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepAnswer, leaks } from '../support/leaks.ts';

/*
 * The service's real processes, as an operator starts them: `npm start` (the compiled
 * dist/src/main.js), the CLI (src/cli/main.ts) and the migration script (scripts/db.ts), each in
 * its own Node process.
 */

const ROOT = new URL('../..', import.meta.url);
const ROOT_DIR = fileURLToPath(ROOT);

/** What `npm start` runs. */
export const COMPILED_ENTRY = 'dist/src/main.js';

function newestModification(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newestModification(path) : statSync(path).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

function builtAt(): number {
  try {
    return statSync(join(ROOT_DIR, COMPILED_ENTRY)).mtimeMs;
  } catch {
    return 0;
  }
}

function isBuildCurrent(): boolean {
  const sources = Math.max(
    newestModification(join(ROOT_DIR, 'src')),
    statSync(join(ROOT_DIR, 'tsconfig.json')).mtimeMs,
    statSync(join(ROOT_DIR, 'tsconfig.build.json')).mtimeMs,
  );
  return builtAt() >= sources;
}

/**
 * Builds dist/ (`npm run build`) unless it is newer than every source, so that the process tests
 * exercise what `npm start` runs. `npm ci` has built it already (prepare); after an edit, the
 * first test file to need it builds it once, holding a lock directory, while others wait.
 */
let built = false;

export function ensureBuilt(): void {
  // Sources do not change while a test file runs: one look over src/ per file is enough.
  if (built) return;
  const lock = join(ROOT_DIR, '.tmp', 'build.lock');
  mkdirSync(join(ROOT_DIR, '.tmp'), { recursive: true });
  const until = Date.now() + 120_000;
  for (;;) {
    if (isBuildCurrent()) {
      built = true;
      return;
    }
    try {
      mkdirSync(lock);
    } catch {
      if (Date.now() > until) throw new Error(`${lock} is held for too long; remove it if no build runs`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      continue;
    }
    try {
      if (!isBuildCurrent())
        execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT_DIR, stdio: 'inherit' });
    } finally {
      rmdirSync(lock);
    }
  }
}

let started = 0;

/** The token secret a test hands a process is a secret of the file's scan. */
function registerEnvironment(env: Record<string, string>): void {
  leaks.secret(env.CMS_SECRET, 'CMS_SECRET given to a process');
}

function probedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Ports this test process has handed out. A probe's port is free again once it is closed, and the
 * kernel may offer it to the very next probe: two calls in a row (PORT and METRICS_PORT) got the
 * same port once. None is handed out twice.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await probedPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no port free that this test process has not handed out already');
}

export interface Service {
  process: ChildProcess;
  exited: Promise<number | null>;
  /** Resolves once the output (stdout and stderr together) matches; rejects if the process ends first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  output(): string;
}

/**
 * Starts the server as `npm start` does, compiled, with only the given environment (and PATH):
 * node on the compiled entry, or (`'npm'`) `npm start` itself, in a process group of its own, since
 * npm runs the service in a shell below it.
 */
export function startService(env: Record<string, string>, launcher: 'node' | 'npm' = 'node'): Service {
  ensureBuilt();
  const [command, args] =
    launcher === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, [COMPILED_ENTRY]];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: launcher === 'npm',
  });
  let output = '';
  registerEnvironment(env);
  leaks.watchProcess(`service #${++started} (${COMPILED_ENTRY})`, () => output);
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp, timeoutMs = 30000) => {
    const until = Date.now() + timeoutMs;
    while (!pattern.test(output)) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`not seen ${pattern}:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { process: child, exited, waitFor, output: () => output };
}

/** Stops a service that is still running and waits for it to be gone. */
export async function stopService(service: Service | undefined): Promise<void> {
  if (!service || service.process.exitCode !== null || service.process.signalCode !== null) return;
  // A service started through npm leads a process group: the group goes with it.
  if (service.process.spawnargs[0] === 'npm' && service.process.pid !== undefined) {
    process.kill(-service.process.pid, 'SIGKILL');
  } else service.process.kill('SIGKILL');
  await service.exited;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ScriptOptions {
  /** Node's own flags (e.g. a heap cap), before the loader. */
  nodeFlags?: string[];
  /** What the script reads on stdin: a password (`cms password`), kept from its output. */
  stdin?: string;
  timeoutMs?: number;
}

/** Runs a TypeScript entry point of the project (`src/cli/main.ts`, `scripts/db.ts`) to its end. */
export function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  { nodeFlags = [], stdin = '', timeoutMs = 60_000 }: ScriptOptions = {},
): Promise<Run> {
  registerEnvironment(env);
  leaks.password(stdin.trim(), `password typed into ${script}`);
  let output = '';
  leaks.watchProcess(`${script} ${args.join(' ')}`.slice(0, 80), () => output);
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...nodeFlags, '--import', 'tsx', script, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        output = `${stdout}\n${stderr}`;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(stdin);
  });
}

/** One JSON request to a local server. */
export function post(
  port: number,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const text = JSON.stringify(body);
  leaks.secret(headers['X-SS-API-KEY'], 'API key sent to a process');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(text),
          ...headers,
        },
      },
      (res) => {
        let answer = '';
        res.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
        });
        res.on('end', () => {
          keepAnswer(`response POST ${path} (process)`, answer);
          let json: unknown = answer;
          try {
            json = JSON.parse(answer);
          } catch {
            // Not JSON: kept as text for the failure message.
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** The bootstrap key a first start printed. */
export function bootstrapKeyOf(output: string): string | undefined {
  return /Bootstrap API key[^\n]*\n\s+(cms_[\w-]+)/.exec(output)?.[1];
}
