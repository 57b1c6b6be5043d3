import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ContractOperation } from '../contract.ts';
import { type FieldError, ProblemError, problem } from './problem.ts';
import { queryOnce } from './queryOnce.ts';

/*
 * Integer path and query parameters are plain decimal digits with an optional sign. The validator
 * coerces with Number(), which reads `1e1`, `0x0A` and ` 10` as 10 and lets `Infinity` and `1e309`
 * through to the database; here they are a 400 before it runs. Ranges (int32, minimum) stay the
 * validator's job.
 */

const PLAIN_INTEGER = /^[+-]?\d+$/;

/** Why a given value is not a plain integer, or undefined when it is one. */
function problemOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || !PLAIN_INTEGER.test(value))
    return 'must be an integer written in plain digits';
  // Beyond 2^53 Number() loses digits and then reaches Infinity; the validator checks int32 below it.
  return Number.isSafeInteger(Number(value)) ? undefined : 'must be an integer within int32';
}

function valuesOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

/** The check for one operation's integer parameters, or undefined when it has none. */
export function strictIntegerParameters(operation: ContractOperation): RequestHandler | undefined {
  if (operation.integerParameters.length === 0) return undefined;
  return (req: Request, _res: Response, next: NextFunction) => {
    const errors: FieldError[] = [];
    for (const parameter of operation.integerParameters) {
      const given: unknown =
        parameter.in === 'path' ? req.params[parameter.name] : queryOnce(req)[parameter.name];
      if (given === undefined) continue;
      const message = valuesOf(given)
        .map(problemOf)
        .find((found) => found !== undefined);
      if (message !== undefined) errors.push({ path: `/${parameter.in}/${parameter.name}`, message });
    }
    if (errors.length === 0) return next();
    const detail = errors.map((error) => `${error.path} ${error.message}`).join('; ');
    next(new ProblemError(problem(400, detail, { kind: 'validation', errors })));
  };
}
