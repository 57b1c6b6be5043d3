import { newRunId, RUN_ID_VARIABLE } from './run.ts';

/** Names this run before any worker starts, so that every worker names what it makes after it. */
export default function globalSetup(): void {
  process.env[RUN_ID_VARIABLE] = newRunId();
}
