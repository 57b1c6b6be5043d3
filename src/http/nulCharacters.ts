import type { RequestHandler } from 'express';
import { ProblemError, problem } from './problem.ts';
import { queryOnce } from './queryOnce.ts';

/*
 * PostgreSQL cannot store the NUL character in text, and SQLite can: so that both databases behave
 * alike, and no such string reaches a query, a request whose body or query string holds one is a
 * 400 naming where.
 */

function nulPaths(value: unknown, path: string, found: string[]): void {
  if (found.length >= 10) return;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      nulPaths(item, `${path}/${index}`, found);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) found.push(`${path}/${key.replaceAll('\u0000', '\\u0000')}`);
      else nulPaths(item, `${path}/${key}`, found);
    }
  }
}

export function rejectNulCharacters(): RequestHandler {
  return (req, _res, next) => {
    const found: string[] = [];
    nulPaths(req.body, '/body', found);
    nulPaths(queryOnce(req), '/query', found);
    if (found.length === 0) return next();
    next(
      new ProblemError(
        problem(400, `Text must not contain the NUL character (\\u0000): ${found.join(', ')}`, {
          kind: 'validation',
          errors: found.map((path) => ({ path, message: 'must not contain the NUL character' })),
        }),
      ),
    );
  };
}
