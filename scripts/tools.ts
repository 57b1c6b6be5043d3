import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../src/projectRoot.ts';

/**
 * Runs a command quietly; rejects with everything it printed when it fails, so a generator's or a
 * compiler's error reaches whoever ran the script. `command` is looked up on PATH unless it is a path.
 */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? PROJECT_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}\n${output.trim()}`));
    });
  });
}

/** Runs a tool of node_modules/.bin in the project (see runCommand). */
export function runTool(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  return runCommand(join(PROJECT_ROOT, 'node_modules', '.bin', command), args, { env });
}
