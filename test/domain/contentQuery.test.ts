import { describe, expect, jest, test } from '@jest/globals';
import type { DbProvider } from '../../src/db/client.ts';
import { likeToRegex } from '../../src/db/likePatterns.ts';
import { CONTENT_COLUMN_NAMES } from '../../src/domain/contents/columns.ts';
import {
  type ContentFilter,
  compileContentQuery,
  keptContentQuery,
  type OrderRule,
  type WhereRule,
} from '../../src/domain/contents/query.ts';
import { parseDateTime } from '../../src/domain/dates.ts';
import { DomainError } from '../../src/domain/errors.ts';

/*
 * The content query compiler on its own, without a database: for each operator and each kind of
 * column (integer, boolean, date, text, nullable text and date, list), the SQL text each dialect
 * gets and the values bound with it, and every refusal with the field it names. What the SQL
 * answers on real data is the business of test/contents (over HTTP, on both databases); this pins
 * the text and the binding, so that no value is ever spliced into SQL and a change of the
 * generated SQL is seen in review.
 */

const SITE = 7;
/** Every filter starts with these conditions and values; the cases below give what follows them. */
const BASE = {
  sqlite: { text: 'WHERE "siteId" = ? AND "recycled" = ?', values: [SITE, false] },
  postgresql: { text: 'WHERE "siteId" = $1 AND "recycled" = $2', values: [SITE, false] },
} as const;

function textOf(fragment: { sql: string; text: string }, provider: DbProvider): string {
  return provider === 'sqlite' ? fragment.sql : fragment.text;
}

/** The condition one `wheres` rule adds after the base conditions, and the values it binds. */
function whereRule(rule: WhereRule, provider: DbProvider): { text: string; values: unknown[] } {
  const { matchWhere } = compileContentQuery({ siteId: SITE, wheres: [rule] }, provider);
  const text = textOf(matchWhere, provider);
  const base = BASE[provider];
  expect(text.startsWith(`${base.text} AND `)).toBe(true);
  expect(matchWhere.values.slice(0, 2)).toEqual(base.values);
  return { text: text.slice(base.text.length + ' AND '.length), values: matchWhere.values.slice(2) };
}

/** The field problems a filter is refused with (fails when it is accepted). */
function refusal(filter: Omit<ContentFilter, 'siteId'>, provider: DbProvider = 'sqlite') {
  try {
    compileContentQuery({ siteId: SITE, ...filter }, provider);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const { code, fields } = error as DomainError;
    expect(code).toBe('validation');
    return fields;
  }
  throw new Error('the filter was accepted');
}

const JUNE = parseDateTime('2024-06-01 12:00:00');

interface RuleCase {
  rule: WhereRule;
  sqlite: string;
  postgresql: string;
  values: unknown[];
}

const RULES: Record<string, RuleCase> = {
  // Integer columns: every comparison, the value read from a string or a number.
  'integer =, the default operator': {
    rule: { column: 'hits', value: '300' },
    sqlite: '"hits" = ?',
    postgresql: '"hits" = $3',
    values: [300],
  },
  'integer !=': {
    rule: { column: 'hits', operator: '!=', value: 5 },
    sqlite: '"hits" <> ?',
    postgresql: '"hits" <> $3',
    values: [5],
  },
  'integer >': {
    rule: { column: 'taxis', operator: '>', value: ' -2 ' },
    sqlite: '"taxis" > ?',
    postgresql: '"taxis" > $3',
    values: [-2],
  },
  'integer >=': {
    rule: { column: 'hits', operator: '>=', value: '2147483647' },
    sqlite: '"hits" >= ?',
    postgresql: '"hits" >= $3',
    values: [2147483647],
  },
  'integer <': {
    rule: { column: 'channelId', operator: '<', value: '-2147483648' },
    sqlite: '"channelId" < ?',
    postgresql: '"channelId" < $3',
    values: [-2147483648],
  },
  'integer <=': {
    rule: { column: 'id', operator: '<=', value: 40 },
    sqlite: '"id" <= ?',
    postgresql: '"id" <= $3',
    values: [40],
  },
  'integer In, items trimmed': {
    rule: { column: 'channelId', operator: 'In', value: '3, 4,5' },
    sqlite: '"channelId" IN (?,?,?)',
    postgresql: '"channelId" IN ($3,$4,$5)',
    values: [3, 4, 5],
  },
  'integer NotIn': {
    rule: { column: 'channelId', operator: 'NotIn', value: '3' },
    sqlite: 'NOT ("channelId" IN (?))',
    postgresql: 'NOT ("channelId" IN ($3))',
    values: [3],
  },
  // Boolean columns: = and != with the words the original used.
  'boolean = True': {
    rule: { column: 'top', value: 'True' },
    sqlite: '"top" = ?',
    postgresql: '"top" = $3',
    values: [true],
  },
  'boolean != 0': {
    rule: { column: 'recommend', operator: '!=', value: '0' },
    sqlite: '"recommend" <> ?',
    postgresql: '"recommend" <> $3',
    values: [false],
  },
  'boolean = a JSON boolean': {
    rule: { column: 'checked', value: false },
    sqlite: '"checked" = ?',
    postgresql: '"checked" = $3',
    values: [false],
  },
  // Date columns: a date-time in the service's zone, bound as an instant.
  'date >=': {
    rule: { column: 'addDate', operator: '>=', value: '2024-06-01 12:00:00' },
    sqlite: '"addDate" >= ?',
    postgresql: '"addDate" >= $3',
    values: [JUNE],
  },
  'date <': {
    rule: { column: 'lastModifiedDate', operator: '<', value: '2024-06-01 12:00:00' },
    sqlite: '"lastModifiedDate" < ?',
    postgresql: '"lastModifiedDate" < $3',
    values: [JUNE],
  },
  'nullable date =: NULL never matches': {
    rule: { column: 'lastHitsDate', value: '2024-06-01 12:00:00' },
    sqlite: '"lastHitsDate" = ?',
    postgresql: '"lastHitsDate" = $3',
    values: [JUNE],
  },
  'nullable date !=: NULL rows are kept': {
    rule: { column: 'lastHitsDate', operator: '!=', value: '2024-06-01 12:00:00' },
    sqlite: '("lastHitsDate" IS NULL OR "lastHitsDate" <> ?)',
    postgresql: '("lastHitsDate" IS NULL OR "lastHitsDate" <> $3)',
    values: [JUNE],
  },
  'nullable date NotIn: NULL rows are kept': {
    rule: { column: 'lastHitsDate', operator: 'NotIn', value: '2024-06-01 12:00:00' },
    sqlite: '("lastHitsDate" IS NULL OR NOT ("lastHitsDate" IN (?)))',
    postgresql: '("lastHitsDate" IS NULL OR NOT ("lastHitsDate" IN ($3)))',
    values: [JUNE],
  },
  // Text columns: byte order on PostgreSQL (COLLATE "C"), as SQLite compares.
  'text =': {
    rule: { column: 'author', value: 'Ada' },
    sqlite: '"author" = ?',
    postgresql: '"author" COLLATE "C" = $3',
    values: ['Ada'],
  },
  'text >': {
    rule: { column: 'title', operator: '>', value: 'M' },
    sqlite: '"title" > ?',
    postgresql: '"title" COLLATE "C" > $3',
    values: ['M'],
  },
  'text In: the form A name content is the stored body': {
    rule: { column: 'content', operator: 'In', value: 'a,b' },
    sqlite: '"body" IN (?,?)',
    postgresql: '"body" IN ($3,$4)',
    values: ['a', 'b'],
  },
  'text NotIn': {
    rule: { column: 'source', operator: 'notin', value: 'x' },
    sqlite: 'NOT ("source" IN (?))',
    postgresql: 'NOT ("source" IN ($3))',
    values: ['x'],
  },
  'text Like on the title: lower("title"), which an index holds on SQLite': {
    rule: { column: 'title', operator: 'Like', value: '%Market%' },
    sqlite: `lower("title") LIKE ? ESCAPE '\\'`,
    postgresql: `lower("title") LIKE lower($3) ESCAPE '\\'`,
    values: ['%Market%'],
  },
  'text Like on another column': {
    rule: { column: 'summary', operator: 'LIKE', value: 'a\\%b_' },
    sqlite: `"summary" LIKE ? ESCAPE '\\'`,
    postgresql: `lower("summary") LIKE lower($3) ESCAPE '\\'`,
    values: ['a\\%b_'],
  },
  'text NotLike': {
    rule: { column: 'summary', operator: ' notlike ', value: '%results%' },
    sqlite: `NOT ("summary" LIKE ? ESCAPE '\\')`,
    postgresql: `NOT (lower("summary") LIKE lower($3) ESCAPE '\\')`,
    values: ['%results%'],
  },
  'nullable text =: NULL reads as the empty text': {
    rule: { column: 'linkUrl', value: '' },
    sqlite: `COALESCE("linkUrl", '') = ?`,
    postgresql: `COALESCE("linkUrl", '') COLLATE "C" = $3`,
    values: [''],
  },
  'nullable text !=': {
    rule: { column: 'linkUrl', operator: '!=', value: 'https://example.com/' },
    sqlite: `COALESCE("linkUrl", '') <> ?`,
    postgresql: `COALESCE("linkUrl", '') COLLATE "C" <> $3`,
    values: ['https://example.com/'],
  },
  'nullable text Like': {
    rule: { column: 'linkUrl', operator: 'Like', value: 'https:%' },
    sqlite: `COALESCE("linkUrl", '') LIKE ? ESCAPE '\\'`,
    postgresql: `lower(COALESCE("linkUrl", '')) LIKE lower($3) ESCAPE '\\'`,
    values: ['https:%'],
  },
  // List columns: group and tag names are looked up in ContentLabel (kind 0 groups, 1 tags).
  'list =: a group name': {
    rule: { column: 'groupNames', value: ' Featured ' },
    sqlite:
      '"id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = ? AND "kind" = ? AND "name" IN (lower(?)))',
    postgresql:
      '"id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = $3 AND "kind" = $4 AND "name" IN (lower($5)))',
    values: [SITE, 0, 'Featured'],
  },
  'list !=: a tag name': {
    rule: { column: 'tagNames', operator: '!=', value: 'tech' },
    sqlite:
      'NOT ("id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = ? AND "kind" = ? AND "name" IN (lower(?))))',
    postgresql:
      'NOT ("id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = $3 AND "kind" = $4 AND "name" IN (lower($5))))',
    values: [SITE, 1, 'tech'],
  },
  'list In: any of the names, empty items dropped': {
    rule: { column: 'tagNames', operator: 'In', value: 'a, ,b' },
    sqlite:
      '"id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = ? AND "kind" = ? AND "name" IN (lower(?),lower(?)))',
    postgresql:
      '"id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = $3 AND "kind" = $4 AND "name" IN (lower($5),lower($6)))',
    values: [SITE, 1, 'a', 'b'],
  },
  'list NotIn': {
    rule: { column: 'groupNames', operator: 'NotIn', value: 'home' },
    sqlite:
      'NOT ("id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = ? AND "kind" = ? AND "name" IN (lower(?))))',
    postgresql:
      'NOT ("id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = $3 AND "kind" = $4 AND "name" IN (lower($5))))',
    values: [SITE, 0, 'home'],
  },
  'list = the empty name: an empty item of the joined text, which ContentLabel does not hold': {
    rule: { column: 'groupNames', value: '' },
    sqlite: `(',' || "groupNames" || ',') LIKE ? ESCAPE '\\'`,
    postgresql: `lower((',' || "groupNames" || ',')) LIKE lower($3) ESCAPE '\\'`,
    values: ['%,,%'],
  },
  'list In with only empty items matches nothing': {
    rule: { column: 'groupNames', operator: 'In', value: ' , ' },
    sqlite: '1 = 0',
    postgresql: '1 = 0',
    values: [],
  },
};

describe('the content query compiler', () => {
  describe.each(['sqlite', 'postgresql'] as const)('wheres on %s', (provider) => {
    test.each(Object.entries(RULES))('%s', (_name, { rule, values, ...dialects }) => {
      expect(whereRule(rule, provider)).toEqual({ text: dialects[provider], values });
    });
  });

  test('every operator and every column kind has a case', () => {
    const operators = new Set(
      Object.values(RULES).map(({ rule }) => (rule.operator ?? '=').trim().toLowerCase()),
    );
    expect([...operators].sort()).toEqual([
      '!=',
      '<',
      '<=',
      '=',
      '>',
      '>=',
      'in',
      'like',
      'notin',
      'notlike',
    ]);
    const columns = new Set(Object.values(RULES).map(({ rule }) => rule.column));
    for (const column of [
      'hits',
      'top',
      'addDate',
      'lastHitsDate',
      'title',
      'linkUrl',
      'groupNames',
      'tagNames',
    ]) {
      expect(columns).toContain(column);
    }
    expect(CONTENT_COLUMN_NAMES).toEqual(expect.arrayContaining([...columns]));
  });

  test('several rules are joined with AND, in order, each value bound', () => {
    const { matchWhere } = compileContentQuery(
      {
        siteId: SITE,
        wheres: [
          { column: 'hits', operator: '>=', value: '300' },
          { column: 'title', operator: 'NotLike', value: '%results%' },
        ],
      },
      'postgresql',
    );
    expect(matchWhere.text).toBe(
      `${BASE.postgresql.text} AND "hits" >= $3 AND NOT (lower("title") LIKE lower($4) ESCAPE '\\')`,
    );
    expect(matchWhere.values).toEqual([SITE, false, 300, '%results%']);
  });

  test('no value of a rule ever reaches the SQL text', () => {
    const hostile = `x'); DROP TABLE "Content"; --`;
    for (const provider of ['sqlite', 'postgresql'] as const) {
      for (const operator of ['=', '!=', '>', 'In', 'NotIn', 'Like', 'NotLike']) {
        const { text, values } = whereRule({ column: 'title', operator, value: hostile }, provider);
        expect(text).not.toContain('DROP');
        // PostgreSQL binds a long pattern as its regular expression (src/db/likePatterns.ts).
        const regex =
          provider === 'postgresql' && operator.endsWith('Like') ? likeToRegex(hostile) : undefined;
        expect(values).toContain(regex ?? hostile);
      }
    }
  });

  describe('filters beside wheres', () => {
    test.each([
      ['Self', '"channelId" = $3', [3]],
      [
        'Children',
        '"channelId" IN (SELECT "id" FROM "Channel" WHERE "siteId" = $3 AND "parentId" = $4)',
        [SITE, 3],
      ],
      [
        'SelfAndChildren',
        '"channelId" IN (SELECT "id" FROM "Channel" WHERE "siteId" = $3 AND ("id" = $4 OR "parentId" = $5))',
        [SITE, 3, 3],
      ],
      [
        'Descendant',
        `"channelId" IN (SELECT "id" FROM "Channel" WHERE "siteId" = $3 AND ',' || "parentsPath" || ',' LIKE $4)`,
        [SITE, '%,3,%'],
      ],
      [
        'SelfAndDescendants',
        `"channelId" IN (SELECT "id" FROM "Channel" WHERE "siteId" = $3 AND ("id" = $4 OR ',' || "parentsPath" || ',' LIKE $5))`,
        [SITE, 3, '%,3,%'],
      ],
    ] as const)('channel scope %s', (scope, condition, values) => {
      const compiled = compileContentQuery({ siteId: SITE, channels: { channelId: 3, scope } }, 'postgresql');
      expect(compiled.matchWhere.text).toBe(`${BASE.postgresql.text} AND ${condition}`);
      expect(compiled.matchWhere.values).toEqual([SITE, false, ...values]);
      // The tally holds contents by site and channel: it can sum this filter's total.
      expect(compiled.tallyWhere?.text).toBe(
        `WHERE "siteId" = $1 AND ${condition.replace(/\$(\d+)/g, (_, n) => `$${Number(n) - 1}`)}`,
      );
      expect(compiled.tallyWhere?.values).toEqual([SITE, ...values]);
    });

    test('flags, group and tag names and a start date each narrow the filter past the tally', () => {
      const compiled = compileContentQuery(
        {
          siteId: SITE,
          checked: true,
          top: true,
          recommend: false,
          hot: true,
          color: false,
          groupNames: ['home', ' '],
          groupNamesNot: ['hidden'],
          tagNames: ['tech'],
          addedSince: JUNE,
        },
        'sqlite',
      );
      const label =
        '"id" IN (SELECT "contentId" FROM "ContentLabel" WHERE "siteId" = ? AND "kind" = ? AND "name" IN (lower(?)))';
      expect(compiled.matchWhere.sql).toBe(
        [
          BASE.sqlite.text,
          '"checked" = ?',
          '"top" = ?',
          '"recommend" = ?',
          '"hot" = ?',
          '"color" = ?',
          label,
          `NOT (${label})`,
          label,
          '"addDate" >= ?',
        ].join(' AND '),
      );
      expect(compiled.matchWhere.values).toEqual([
        SITE,
        false,
        true,
        true,
        false,
        true,
        false,
        SITE,
        0,
        'home',
        SITE,
        0,
        'hidden',
        SITE,
        1,
        'tech',
        JUNE,
      ]);
      expect(compiled.tallyWhere).toBeUndefined();
    });

    test('the review state alone keeps the tally', () => {
      const compiled = compileContentQuery({ siteId: SITE, checked: false }, 'sqlite');
      expect(compiled.tallyWhere?.sql).toBe('WHERE "siteId" = ? AND "checked" = ?');
      expect(compiled.tallyWhere?.values).toEqual([SITE, false]);
    });

    test('SQLite puts its time limit first in the WHERE clause, bound to the time each statement is made (a query compiled once is kept); PostgreSQL has none', () => {
      const now = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
      try {
        const sqlite = compileContentQuery({ siteId: SITE, checked: true }, 'sqlite');
        now.mockReturnValue(1_700_000_000_250);
        const first = sqlite.whereNow();
        expect(first.sql).toBe(
          'WHERE "cms_time_limit"(?) = 1 AND "siteId" = ? AND "recycled" = ? AND "checked" = ?',
        );
        expect(first.values).toEqual([1_700_000_000_250, SITE, false, true]);
        now.mockReturnValue(1_700_000_009_000);
        expect(sqlite.whereNow().values).toEqual([1_700_000_009_000, SITE, false, true]);
        expect(sqlite.matchWhere.sql).toBe(`${BASE.sqlite.text} AND "checked" = ?`);
        const postgresql = compileContentQuery({ siteId: SITE }, 'postgresql');
        expect(postgresql.whereNow().text).toBe(BASE.postgresql.text);
        expect(postgresql.whereNow().values).toEqual([SITE, false]);
      } finally {
        now.mockRestore();
      }
    });
  });

  describe('orders', () => {
    const order = (orders: readonly OrderRule[] | 'random', provider: DbProvider) => {
      const compiled = compileContentQuery({ siteId: SITE, orders }, provider);
      return {
        orderBy: textOf(compiled.orderBy, provider),
        keys: compiled.orderKeys?.map(({ column, desc }) => `${column.sql}${desc ? ' desc' : ''}`),
      };
    };

    test.each(['sqlite', 'postgresql'] as const)('the default order on %s, keyset-ready', (provider) => {
      expect(order([], provider)).toEqual({
        orderBy: 'ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC',
        keys: ['"top" desc', '"channelId" desc', '"taxis" desc', '"id" desc'],
      });
    });

    test('integer and boolean keys, with id added last as the tie-break', () => {
      expect(
        order(
          [
            { column: 'hits', desc: true },
            { column: 'hot', desc: false },
          ],
          'sqlite',
        ),
      ).toEqual({
        orderBy: 'ORDER BY "hits" DESC, "hot" ASC, "id" DESC',
        keys: ['"hits" desc', '"hot"', '"id" desc'],
      });
    });

    test('id asked for is not added again; a repeated column counts once', () => {
      expect(
        order(
          [
            { column: 'id', desc: false },
            { column: 'id', desc: true },
          ],
          'postgresql',
        ),
      ).toEqual({ orderBy: 'ORDER BY "id" ASC', keys: ['"id"'] });
    });

    test('text sorts in byte order on PostgreSQL; nullable columns put NULL lowest; neither is a keyset', () => {
      const rules = [
        { column: 'title', desc: false },
        { column: 'lastHitsDate', desc: true },
        { column: 'linkUrl', desc: false },
      ];
      expect(order(rules, 'postgresql')).toEqual({
        orderBy:
          'ORDER BY "title" COLLATE "C" ASC, "lastHitsDate" DESC NULLS LAST, "linkUrl" COLLATE "C" ASC NULLS FIRST, "id" DESC',
        keys: undefined,
      });
      expect(order(rules, 'sqlite')).toEqual({
        orderBy: 'ORDER BY "title" ASC, "lastHitsDate" DESC NULLS LAST, "linkUrl" ASC NULLS FIRST, "id" DESC',
        keys: undefined,
      });
    });

    test('a date key is sortable but not a keyset', () => {
      expect(order([{ column: 'addDate', desc: true }], 'sqlite')).toEqual({
        orderBy: 'ORDER BY "addDate" DESC, "id" DESC',
        keys: undefined,
      });
    });

    test.each(['sqlite', 'postgresql'] as const)('random on %s', (provider) => {
      expect(order('random', provider)).toEqual({ orderBy: 'ORDER BY RANDOM()', keys: undefined });
    });
  });

  describe('refusals, each at its place in the filter', () => {
    const where = (rule: WhereRule) => refusal({ wheres: [rule] });
    const allowedColumns = `allowed columns: ${CONTENT_COLUMN_NAMES.join(', ')}`;

    test.each([
      [{ column: 'password', value: 'x' }, `unknown column 'password'; ${allowedColumns}`],
      [{ column: 'Title', value: 'x' }, `unknown column 'Title'; ${allowedColumns}`],
      [
        { column: 'title', operator: 'contains', value: 'x' },
        "unknown operator 'contains'; allowed operators: =, !=, >, >=, <, <=, In, NotIn, Like, NotLike",
      ],
      [{ column: 'hits', value: 'abc' }, "must be an integer for column 'hits'"],
      [{ column: 'hits', value: '1.5' }, "must be an integer for column 'hits'"],
      [{ column: 'hits', value: '1e3' }, "must be an integer for column 'hits'"],
      [{ column: 'hits', value: true }, "must be an integer for column 'hits'"],
      [{ column: 'hits', value: 1.5 }, "must be an integer for column 'hits'"],
      [
        { column: 'hits', value: '2147483648' },
        "must be an integer from -2147483648 to 2147483647 for column 'hits'",
      ],
      [{ column: 'channelId', operator: 'In', value: '3,x' }, "must be an integer for column 'channelId'"],
      [{ column: 'top', value: 'maybe' }, "must be true or false for column 'top'"],
      [
        { column: 'top', operator: '>', value: 'true' },
        "operator '>' does not apply to boolean column 'top'",
      ],
      [
        { column: 'addDate', value: '2024-13-01 00:00:00' },
        "must be a date-time 'yyyy-MM-dd HH:mm:ss' for column 'addDate'",
      ],
      [
        { column: 'addDate', value: 20240601 },
        "must be a date-time 'yyyy-MM-dd HH:mm:ss' for column 'addDate'",
      ],
      [
        { column: 'hits', operator: 'Like', value: '1%' },
        "operator 'Like' applies to text columns only, not 'hits'",
      ],
      [
        { column: 'addDate', operator: 'NotLike', value: '2024%' },
        "operator 'NotLike' applies to text columns only, not 'addDate'",
      ],
      [
        { column: 'tagNames', operator: '>', value: 'a' },
        "operator '>' does not apply to list column 'tagNames'",
      ],
      [
        { column: 'title', operator: 'Like', value: 'x'.repeat(1001) },
        'a Like pattern must be at most 1000 characters',
      ],
      [
        { column: 'id', operator: 'In', value: Array.from({ length: 1001 }, (_, i) => i).join(',') },
        'an In list must hold at most 1000 items',
      ],
    ] as const)('%j', (rule, message) => {
      expect(where(rule)).toEqual([{ field: 'wheres/0', message }]);
    });

    test('the limits themselves are accepted', () => {
      expect(
        whereRule({ column: 'title', operator: 'Like', value: 'x'.repeat(1000) }, 'sqlite').values,
      ).toEqual(['x'.repeat(1000)]);
      const items = Array.from({ length: 1000 }, (_, i) => i);
      expect(whereRule({ column: 'id', operator: 'In', value: items.join(',') }, 'sqlite').values).toEqual(
        items,
      );
    });

    test('every problem of a request is reported at once, wheres and orders alike', () => {
      expect(
        refusal({
          wheres: [
            { column: 'hits', value: '1' },
            { column: 'nope', value: '1' },
            { column: 'top', value: 'maybe' },
          ],
          orders: [
            { column: 'hits', desc: true },
            { column: 'nope', desc: false },
          ],
        }),
      ).toEqual([
        { field: 'wheres/1', message: `unknown column 'nope'; ${allowedColumns}` },
        { field: 'wheres/2', message: "must be true or false for column 'top'" },
        { field: 'orders/1/column', message: `unknown column 'nope'; ${allowedColumns}` },
      ]);
    });
  });
});

describe('kept compiled queries', () => {
  const filter = (more: Partial<ContentFilter> = {}): ContentFilter => ({
    siteId: SITE,
    channels: { channelId: 3, scope: 'Descendant' },
    checked: true,
    tagNames: ['a', 'b'],
    ...more,
  });

  test('a filter asked again, made anew, is compiled once per provider; another filter is compiled apart', () => {
    const first = keptContentQuery(filter(), 'sqlite');
    expect(keptContentQuery(filter(), 'sqlite')).toBe(first);
    expect(textOf(first.matchWhere, 'sqlite')).toBe(
      textOf(compileContentQuery(filter(), 'sqlite').matchWhere, 'sqlite'),
    );
    const postgresql = keptContentQuery(filter(), 'postgresql');
    expect(postgresql).not.toBe(first);
    expect(textOf(postgresql.matchWhere, 'postgresql')).toBe(
      textOf(compileContentQuery(filter(), 'postgresql').matchWhere, 'postgresql'),
    );
    const other = keptContentQuery(filter({ tagNames: ['a'] }), 'sqlite');
    expect(other).not.toBe(first);
    expect(other.matchWhere.values).toEqual(
      compileContentQuery(filter({ tagNames: ['a'] }), 'sqlite').matchWhere.values,
    );
  });

  test('a filter with an instant of the clock, or too long to keep, is compiled every time', () => {
    const since = filter({ addedSince: new Date('2024-01-01T00:00:00Z') });
    expect(keptContentQuery(since, 'sqlite')).not.toBe(keptContentQuery(since, 'sqlite'));
    const long = filter({ tagNames: Array.from({ length: 1000 }, (_, index) => `tag-${index}`) });
    expect(keptContentQuery(long, 'sqlite')).not.toBe(keptContentQuery(long, 'sqlite'));
  });

  test('a filter the compiler refuses is refused every time, never kept', () => {
    const refused = filter({ orders: [{ column: 'nope', desc: true } as unknown as OrderRule] });
    for (let attempt = 0; attempt < 2; attempt++)
      expect(() => keptContentQuery(refused, 'sqlite')).toThrow(DomainError);
  });
});
