/*
 * `prepare`, which npm runs at the end of `npm ci` and `npm install`: SQLite for better-sqlite3
 * (scripts/sqlite.ts), and beside it the docs page then dist/. The SQLite compile is one C file on
 * one core, the longest step of an install (bench/RUNTIME.md, "The SQLite build"); the docs and
 * TypeScript builds fit on another core meanwhile.
 */
import { buildDocs } from './docs.ts';
import { buildSqlite } from './sqlite.ts';
import { runCommand } from './tools.ts';

Promise.all([buildSqlite(), buildDocs().then(() => runCommand('npm', ['run', '--silent', 'build']))]).catch(
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
