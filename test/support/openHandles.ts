import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { RUN_ID_VARIABLE } from './run.ts';

/*
 * What keeps a jest worker process alive after its last file (see leakEnvironment.ts): every
 * active handle with what identifies it (a socket's addresses, a child's command, a server's port),
 * and the resource types node counts, timers included.
 */

/** Where a worker writes its report; the global teardown reads every such file of this run. */
export function openHandlesReportFile(pid: number): string {
  return join(tmpdir(), `${openHandlesReportPrefix()}${pid}.txt`);
}

export function openHandlesReportPrefix(run = process.env[RUN_ID_VARIABLE] ?? 'norun'): string {
  return `cms-open-handles-${run}-`;
}

function describeHandle(handle: unknown): string {
  if (typeof handle !== 'object' || handle === null) return String(handle);
  const name = handle.constructor?.name ?? 'Object';
  const fields = handle as Record<string, unknown>;
  const details: string[] = [];
  if (typeof fields.remoteAddress === 'string')
    details.push(`to ${fields.remoteAddress}:${String(fields.remotePort)}`);
  if (typeof fields.localPort === 'number') details.push(`from port ${fields.localPort}`);
  if (typeof fields.spawnfile === 'string') {
    details.push(
      `pid ${String(fields.pid)}: ${[fields.spawnfile, ...((fields.spawnargs as string[]) ?? []).slice(1)].join(' ').slice(0, 200)}`,
    );
  }
  if (typeof fields.threadId === 'number') details.push(`thread ${fields.threadId}`);
  const address = (handle as { address?: () => unknown }).address;
  if (name === 'Server' && typeof address === 'function')
    details.push(`listening on ${JSON.stringify(address.call(handle))}`);
  if (typeof fields.fd === 'number') details.push(`fd ${fields.fd}`);
  return details.length === 0 ? name : `${name} (${details.join(', ')})`;
}

export function openHandlesReport(files: readonly string[]): string {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return [
    `jest worker ${process.pid} did not exit by itself after its last file.`,
    `  resources: ${[...counts].map(([type, count]) => `${type} × ${count}`).join(', ') || 'none'}`,
    ...handles.map((handle) => {
      try {
        return `  handle: ${describeHandle(handle)}`;
      } catch (error) {
        return `  handle: (not described: ${String(error)})`;
      }
    }),
    `  files it ran, in order: ${files.map((file) => relative(process.cwd(), file)).join(', ')}`,
    '',
  ].join('\n');
}
