import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * Child processes of the benchmark (the service as users start it, the floor servers) and their
 * memory, read from /proc: `npm start` is npm, a shell, tsx and node, then node:cluster's workers,
 * so the service's RSS is the sum over that whole tree, and a worker is a process of the tree whose
 * environment carries node:cluster's NODE_UNIQUE_ID.
 */

export interface Started {
  child: ChildProcess;
  /** Everything the process wrote, for the error message when it fails to start. */
  output(): string;
}

export function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Started {
  // A process group of its own, so that stopping it reaches npm's children too.
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => output };
}

/**
 * The service from its sources (tsx, the default two workers unless `env` says otherwise) in
 * production mode on `databaseUrl`, listening on `port`, with a secret of the bench's own.
 */
export function startServiceSources(port: number, databaseUrl: string, env: NodeJS.ProcessEnv, root: string) {
  return startProcess(
    join(root, 'node_modules/.bin/tsx'),
    ['src/main.ts'],
    {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      NODE_ENV: 'production',
      CMS_SECRET: 'bench-secret-that-is-at-least-32-characters',
      ...env,
    },
    root,
  );
}

/** Stops the process group we started (by its id), waiting for the leader to exit. */
export async function stopProcess(started: Started): Promise<void> {
  const { child } = started;
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timeout = sleep(15000).then(() => 'timeout');
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
    await exited;
  }
  // The group's other members (workers) may outlive the leader by a moment.
  for (let i = 0; i < 50 && groupAlive(child.pid); i++) await sleep(100);
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A free port in 20000-32767: away from 3000 (the shared machine's default) and below Linux's
 * ephemeral range (32768-60999), where the load generator's own outgoing connections could take it
 * between this check and the service's bind. Checked on all interfaces, as the service binds.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12768);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Waits until `url` answers 2xx; resolves to the milliseconds since `since`. */
export async function waitForAnswer(url: string, started: Started, since: number, timeoutMs = 120000) {
  for (;;) {
    if (started.child.exitCode !== null) {
      throw new Error(`process exited with ${started.child.exitCode} before answering:\n${started.output()}`);
    }
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return performance.now() - since;
    } catch {}
    if (performance.now() - since > timeoutMs) throw new Error(`no answer from ${url}:\n${started.output()}`);
    await sleep(25);
  }
}

interface ProcessInfo {
  pid: number;
  ppid: number;
  rssBytes: number;
  worker: boolean;
  name: string;
}

function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself hold spaces or parentheses. It is the main
    // thread's name, which Node.js 24 sets to "MainThread": the program (argv[0], or the title npm
    // gives itself) names the process instead when there is one.
    const close = stat.lastIndexOf(')');
    const program = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    const name = program === '' ? stat.slice(stat.indexOf('(') + 1, close) : basename(program);
    const fields = stat.slice(close + 2).split(' ');
    const ppid = Number(fields[1]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    let worker = false;
    try {
      worker = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .some((e) => e.startsWith('NODE_UNIQUE_ID='));
    } catch {}
    return { pid, ppid, rssBytes: rssKb * 1024, worker, name };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

/** The process and all its descendants, now. */
export function processTree(rootPid: number): ProcessInfo[] {
  const all: ProcessInfo[] = [];
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = (() => {
      try {
        return readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        return undefined;
      }
    })();
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const info = readProcess(pid);
    if (info) all.push(info);
    queue.push(...(children.get(pid) ?? []));
  }
  return all;
}

export interface MemoryPeak {
  /** Largest sum of RSS over the whole process tree seen in one sample. */
  totalBytes: number;
  /** Largest RSS of any one worker process (0 when the service runs without workers). */
  workerBytes: number;
  /** Largest RSS seen per process, by pid and name. */
  processes: { pid: number; name: string; worker: boolean; rssBytes: number }[];
}

/** Samples a process tree's RSS every `intervalMs` until stopped; resolves to the peaks. */
export function sampleMemory(rootPid: number, intervalMs = 200) {
  const peak: MemoryPeak = { totalBytes: 0, workerBytes: 0, processes: [] };
  const byPid = new Map<number, MemoryPeak['processes'][number]>();
  const sample = () => {
    const tree = processTree(rootPid);
    const total = tree.reduce((sum, p) => sum + p.rssBytes, 0);
    peak.totalBytes = Math.max(peak.totalBytes, total);
    for (const p of tree) {
      if (p.worker) peak.workerBytes = Math.max(peak.workerBytes, p.rssBytes);
      const seen = byPid.get(p.pid);
      if (!seen) byPid.set(p.pid, { pid: p.pid, name: p.name, worker: p.worker, rssBytes: p.rssBytes });
      else seen.rssBytes = Math.max(seen.rssBytes, p.rssBytes);
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop(): MemoryPeak {
      clearInterval(timer);
      sample();
      peak.processes = [...byPid.values()];
      return peak;
    },
  };
}
