import { describe, expect, test } from '@jest/globals';
import { checkWithParser, VERDICTS_KEPT, verdictsKept } from '../../src/domain/stl/sql/parserWall.ts';

/*
 * The parser wall keeps its verdicts on the texts most recently asked (templates send the same
 * queries again and again): a text asked again gets the same verdict, whether it was kept or had to
 * be worked out again, and no more than VERDICTS_KEPT are kept.
 */

const ACCEPTED = 'SELECT id, title FROM siteserver_Content WHERE channelId = 2';
const REFUSED = 'SELECT id FROM siteserver_Administrator';
const UNREADABLE = 'SELECT id FROM FROM siteserver_Content';

describe.each(['sqlite', 'postgresql'] as const)('the parser wall on %s', (dialect) => {
  test('gives a text asked again the same verdict, kept or worked out again', () => {
    const first = [ACCEPTED, REFUSED, UNREADABLE].map((text) => checkWithParser(text, dialect));
    expect(first[0]).toBeUndefined();
    expect(first[1]).toMatch(/siteserver_Administrator/i);
    expect(first[2]).toMatch(/cannot be read as a/);
    expect([ACCEPTED, REFUSED, UNREADABLE].map((text) => checkWithParser(text, dialect))).toEqual(first);
    // Enough other texts that the three are no longer kept: the verdicts are worked out again.
    for (let n = 0; n <= VERDICTS_KEPT; n++) {
      expect(checkWithParser(`SELECT id FROM siteserver_Content WHERE id = ${n}`, dialect)).toBeUndefined();
    }
    expect(verdictsKept()).toBe(VERDICTS_KEPT);
    expect([ACCEPTED, REFUSED, UNREADABLE].map((text) => checkWithParser(text, dialect))).toEqual(first);
    expect(verdictsKept()).toBe(VERDICTS_KEPT);
  });

  test('keeps the verdicts of each dialect apart', () => {
    // The same text, accepted by one dialect's wall and refused by the other's, asked in turn.
    const sqliteOnly = "SELECT datetime('now') AS d";
    const postgresOnly = 'SELECT now() AS d';
    for (let round = 0; round < 2; round++) {
      expect(checkWithParser(sqliteOnly, dialect)).toEqual(
        dialect === 'sqlite' ? undefined : expect.stringMatching(/datetime\(\), which is not on/),
      );
      expect(checkWithParser(postgresOnly, dialect)).toEqual(
        dialect === 'postgresql' ? undefined : expect.stringMatching(/now\(\), which is not on/),
      );
    }
  });
});
