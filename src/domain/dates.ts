/*
 * The contract's date-time is `yyyy-MM-dd HH:mm:ss` in the service's time zone (TZ, default the
 * machine's); the database keeps instants (UTC). Node applies TZ to Date's local getters.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function formatDateTime(date: Date): string {
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * Parse `yyyy-MM-dd HH:mm:ss` (seconds, or the whole time, may be left out) as a local time.
 * Also accepts an ISO 8601 instant with an offset. Returns undefined for anything else,
 * including impossible dates such as 2024-02-30.
 */
export function parseDateTime(text: string): Date | undefined {
  const match = DATE_TIME.exec(text.trim());
  if (!match) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text.trim()))
      return undefined;
    const instant = new Date(text.trim());
    return Number.isNaN(instant.getTime()) ? undefined : instant;
  }
  const [year, month, day, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(year, month - 1, day, hours, minutes, seconds);
  const roundTrips =
    date.getFullYear() === year &&
    date.getMonth() === month - 1 &&
    date.getDate() === day &&
    date.getHours() === hours &&
    date.getMinutes() === minutes;
  return roundTrips ? date : undefined;
}
