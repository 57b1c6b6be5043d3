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

test('impossible or malformed dates are refused', () => {
  for (const text of [
    '2024-02-30 10:00:00',
    '2023-02-29',
    '2024-13-01',
    '2024-01-01 24:00:00',
    '2024-1-1',
    'yesterday',
    '',
  ]) {
    expect(parseDateTime(text)).toBeUndefined();
  }
  expect(parseDateTime('2024-02-29 23:59')).toBeInstanceOf(Date);
});
