/*
 * The contract's date-time is `yyyy-MM-dd HH:mm:ss` in the service's time zone (TZ, default the
 * machine's); the database keeps instants (UTC). Node applies TZ to Date's local getters.
 */

/** `00` … `59`: a date's two-digit parts taken as they are, not made anew for every date of a page. */
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/** The character code of digit `n`, and of the separators. */
const digit = (n: number) => 0x30 + n;
const DASH = 0x2d;
const SPACE = 0x20;
const COLON = 0x3a;

/**
 * A date-time made as one string (String.fromCharCode): a page formats its dates by the dozen, and
 * joining eleven parts made garbage of every part. A year beyond four digits is written as it is.
 */
export function formatDateTime(date: Date): string {
  const year = date.getFullYear();
  const month = date.getMonth() + 1;
  const day = date.getDate();
  const hours = date.getHours();
  const minutes = date.getMinutes();
  const seconds = date.getSeconds();
  if (year < 0 || year > 9999) {
    return (
      `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]} ` +
      `${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}`
    );
  }
  return String.fromCharCode(
    digit(Math.trunc(year / 1000)),
    digit(Math.trunc(year / 100) % 10),
    digit(Math.trunc(year / 10) % 10),
    digit(year % 10),
    DASH,
    digit(Math.trunc(month / 10)),
    digit(month % 10),
    DASH,
    digit(Math.trunc(day / 10)),
    digit(day % 10),
    SPACE,
    digit(Math.trunc(hours / 10)),
    digit(hours % 10),
    COLON,
    digit(Math.trunc(minutes / 10)),
    digit(minutes % 10),
    COLON,
    digit(Math.trunc(seconds / 10)),
    digit(seconds % 10),
  );
}

/** `yyyy-MM-dd`, optionally followed by ` HH:mm` or ` HH:mm:ss` (a `T` may stand for the space). */
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;
/** An ISO 8601 instant: a date and time with `Z` or an offset `±HH:mm`. */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

interface WallClock {
  year: number;
  month: number;
  day: number;
  hours: number;
  minutes: number;
  seconds: number;
}

/*
 * Every field is checked against the calendar before a Date is built: Date itself rolls over
 * (2024-02-30 becomes 1 March, 24:00 the next day) instead of refusing.
 */
function isOnTheCalendar({ year, month, day, hours, minutes, seconds }: WallClock): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const days = month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  return day <= days && hours <= 23 && minutes <= 59 && seconds <= 59;
}

function wallClock(parts: readonly (string | undefined)[]): WallClock {
  const [year, month, day, hours, minutes, seconds] = parts.map((part) => Number(part ?? 0));
  return {
    year: year ?? 0,
    month: month ?? 0,
    day: day ?? 0,
    hours: hours ?? 0,
    minutes: minutes ?? 0,
    seconds: seconds ?? 0,
  };
}

/**
 * Parse `yyyy-MM-dd HH:mm:ss` (seconds, or the whole time, may be left out) as a local time, or an
 * ISO 8601 instant with `Z` or an offset. Returns undefined for anything else, including dates and
 * times that are not on the calendar (2024-02-30, 2023-02-29, 24:00:00, 10:60:00, 10:00:60).
 *
 * A local time that the zone skips when clocks go forward (02:30 on a spring-forward night) is a
 * valid date, not an error: it is read with the offset before the change, i.e. moved forward by the
 * gap, as Temporal's default ("compatible") does. A time the zone repeats reads as the earlier one.
 */
export function parseDateTime(text: string): Date | undefined {
  const trimmed = text.trim();
  const local = LOCAL.exec(trimmed);
  if (local) {
    const clock = wallClock(local.slice(1));
    if (!isOnTheCalendar(clock)) return undefined;
    const { year, month, day, hours, minutes, seconds } = clock;
    const date = new Date(year, month - 1, day, hours, minutes, seconds);
    // The constructor reads years 0–99 as 1900–1999; setFullYear does not.
    if (year < 100) date.setFullYear(year);
    return date;
  }
  const instant = INSTANT.exec(trimmed);
  if (!instant) return undefined;
  const clock = wallClock(instant.slice(1, 7));
  const [fraction, sign, offsetHours, offsetMinutes] = instant.slice(7);
  if (!isOnTheCalendar(clock) || Number(offsetHours ?? 0) > 23 || Number(offsetMinutes ?? 0) > 59)
    return undefined;
  const date = new Date(0);
  date.setUTCFullYear(clock.year, clock.month - 1, clock.day);
  date.setUTCHours(
    clock.hours,
    clock.minutes,
    clock.seconds,
    Number((fraction ?? '').padEnd(3, '0').slice(0, 3)),
  );
  const offset = (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0)) * (sign === '-' ? -1 : 1);
  return new Date(date.getTime() - offset * 60_000);
}
