/*
 * Long work — a long text decoded piece by piece, a large answer escaped and written slice by
 * slice — goes one step per turn of the event loop, so other requests are answered between steps.
 * With several such requests at once, a turn would run a step of each of them before anything
 * else, and every other request (a ping, a get-by-id: a few turns each) would wait that many steps
 * per turn. So the steps of all long work of the process take turns together: one step per turn
 * of the loop, first come, first served. With one long request, or none besides, nothing changes.
 */

const waiting: (() => void)[] = [];
let scheduled = false;

function release(): void {
  scheduled = false;
  waiting.shift()?.();
  if (waiting.length > 0) schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  // An immediate queued while immediates run goes to the next turn: one step per turn.
  setImmediate(release);
}

/** Resolves when it is this long work's turn for its next step. */
export function nextStep(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

/**
 * Serialised record bytes (UTF-16 units, which is cheap to count) past which a page answer is
 * streamed record by record (src/http/pages.ts), not sent as one text.
 */
export const STREAM_AFTER_BYTES = 1 << 20;
