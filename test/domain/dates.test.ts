import { execFileSync } from 'node:child_process';
import { expect, test } from '@jest/globals';
import { parseDateTime } from '../../src/domain/dates.ts';

/*
 * Dates are written and read in the service's time zone (TZ, read by Node when the process
 * starts); instants are what is stored. The zone is a process setting, so it is tested in a process
 * started with it, as the service is.
 */

const ROOT = new URL('../..', import.meta.url);

function inZone(tz: string, script: string): unknown {
  const program = `import { formatDateTime, parseDateTime } from './src/domain/dates.ts';\n${script}`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TZ: tz },
    encoding: 'utf8',
  });
  return JSON.parse(output);
}

test('an instant is written in the service time zone, and read back as the same instant', () => {
  const shanghai = inZone(
    'Asia/Shanghai',
    `console.log(JSON.stringify([
      formatDateTime(new Date('2024-01-01T00:00:00Z')),
      parseDateTime('2024-01-01 08:00:00')?.toISOString(),
      parseDateTime('2024-01-01')?.toISOString(),
      parseDateTime('2024-01-01T00:00:00Z')?.toISOString(),
    ]))`,
  );
  expect(shanghai).toEqual([
    '2024-01-01 08:00:00',
    '2024-01-01T00:00:00.000Z',
    '2023-12-31T16:00:00.000Z',
    '2024-01-01T00:00:00.000Z',
  ]);
  const newYork = inZone(
    'America/New_York',
    `console.log(JSON.stringify([formatDateTime(new Date('2024-07-01T12:34:56Z')), parseDateTime('2024-07-01 08:34:56')?.toISOString()]))`,
  );
  expect(newYork).toEqual(['2024-07-01 08:34:56', '2024-07-01T12:34:56.000Z']);
});

test('every part of a date-time is written with its leading zeros, a year before 1000 with four digits, one after 9999 whole', () => {
  const written = inZone(
    'UTC',
    `console.log(JSON.stringify(${JSON.stringify([
      '0999-01-02T03:04:05Z',
      '0005-12-31T23:59:59Z',
      '2024-10-10T10:00:09Z',
      '9999-09-30T00:30:00Z',
      '+012345-06-07T08:09:10Z',
      '1970-01-01T00:00:00Z',
    ])}.map((instant) => formatDateTime(new Date(instant)))))`,
  );
  expect(written).toEqual([
    '0999-01-02 03:04:05',
    '0005-12-31 23:59:59',
    '2024-10-10 10:00:09',
    '9999-09-30 00:30:00',
    '12345-06-07 08:09:10',
    '1970-01-01 00:00:00',
  ]);
});

test('dates and times that are not on the calendar are refused, in every accepted form', () => {
  for (const text of [
    // yyyy-MM-dd HH:mm:ss, as the contract writes it
    '2024-02-30 10:00:00',
    '2023-02-29 10:00:00',
    '1900-02-29 10:00:00',
    '2024-04-31 10:00:00',
    '2024-13-01 10:00:00',
    '2024-00-10 10:00:00',
    '2024-01-00 10:00:00',
    '2024-01-01 24:00:00',
    '2024-01-01 25:00:00',
    '2024-01-01 10:60:00',
    '2024-01-01 10:00:60',
    '0000-01-01 10:00:00',
    // a date alone, or without seconds
    '2023-02-29',
    '2024-06-31',
    '2024-01-01 23:60',
    // ISO 8601 instants: Date itself would roll these over (2024-02-30 into 1 March)
    '2024-02-30T00:00:00Z',
    '2023-02-29T10:00:00+08:00',
    '2024-04-31T12:00:00.000Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T10:60:00Z',
    '2024-01-01T10:00:60Z',
    '2024-01-01T10:00:00+24:00',
    '2024-01-01T10:00:00+01:60',
    // malformed
    '2024-1-1',
    '2024-01-01 10',
    'yesterday',
    '',
  ]) {
    expect([text, parseDateTime(text)]).toEqual([text, undefined]);
  }
});

test('the last day of each month, leap days and the ends of the day are accepted', () => {
  const local = (text: string) => {
    const date = parseDateTime(text);
    return (
      date && [
        date.getFullYear(),
        date.getMonth() + 1,
        date.getDate(),
        date.getHours(),
        date.getMinutes(),
        date.getSeconds(),
      ]
    );
  };
  expect(local('2024-02-29 23:59:59')).toEqual([2024, 2, 29, 23, 59, 59]);
  expect(local('2000-02-29')).toEqual([2000, 2, 29, 0, 0, 0]);
  expect(local('2024-02-29 23:59')).toEqual([2024, 2, 29, 23, 59, 0]);
  expect(local('2023-04-30 00:00:00')).toEqual([2023, 4, 30, 0, 0, 0]);
  expect(local('2023-12-31 23:59:59')).toEqual([2023, 12, 31, 23, 59, 59]);
  expect(local('0099-03-01 10:00:00')).toEqual([99, 3, 1, 10, 0, 0]);
  expect(parseDateTime('2024-02-29T23:59:59Z')?.toISOString()).toBe('2024-02-29T23:59:59.000Z');
  expect(parseDateTime('2024-03-01T07:30:00.5+08:00')?.toISOString()).toBe('2024-02-29T23:30:00.500Z');
  expect(parseDateTime('2024-02-28T22:00:00-03:30')?.toISOString()).toBe('2024-02-29T01:30:00.000Z');
});

test('a local time the zone skips is moved forward by the gap; a repeated one reads as the earlier', () => {
  const newYork = inZone(
    'America/New_York',
    `console.log(JSON.stringify([
      parseDateTime('2024-03-10 02:30:00')?.toISOString(),
      formatDateTime(parseDateTime('2024-03-10 02:30:00')),
      parseDateTime('2024-11-03 01:30:00')?.toISOString(),
    ]))`,
  );
  expect(newYork).toEqual(['2024-03-10T07:30:00.000Z', '2024-03-10 03:30:00', '2024-11-03T05:30:00.000Z']);
});
