/**
 * An integer setting's text read as a whole number within [min, max], or undefined when it is not
 * one. Shared by the configuration (src/config.ts, which reports the bad value) and the entry point's
 * early fork (src/supervisor.ts, which must not load the configuration's validator to read WORKERS).
 */
export function integerWithin(raw: string, min: number, max: number): number | undefined {
  const text = raw.trim();
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
}

/**
 * WORKERS, the worker processes `npm start` runs, as both readers take it: 0 means no supervisor
 * (one process serves alone), unset means DEFAULT_WORKERS.
 */
export const DEFAULT_WORKERS = 2;
export const MAX_WORKERS = 64;
