import { createInterface } from 'node:readline';
import { takeWorkerV8Flags } from '../v8Flags.ts';

/*
 * `npm run cms -- <command>`: see usage() in run.ts. The tool takes a worker's V8 settings before it
 * loads the rest: an import or export of many records otherwise lets garbage pile up (bench/MEMORY.md).
 */

takeWorkerV8Flags();
const { EXIT_FAILED, runCli } = await import('./run.ts');

let code: number;
try {
  code = await runCli(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    tty: process.stderr.isTTY ? process.stderr : undefined,
    readLine: async () => {
      const lines = createInterface({ input: process.stdin, terminal: false });
      for await (const line of lines) {
        lines.close();
        return line;
      }
      return '';
    },
  });
} catch (error) {
  process.stderr.write(`cms: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  code = EXIT_FAILED;
}
// The migration engine leaves a timer running: without an explicit exit the process lingers a minute.
process.exit(code);
