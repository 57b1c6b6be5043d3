import { describe, expect, test } from '@jest/globals';
import {
  type ChannelChoice,
  chooseSite,
  chooseSiteAndChannel,
  chooseSiteAndChannelIds,
  chooseSiteIds,
  type SiteChoice,
} from '../../src/domain/stl/choose.ts';
import { observedStlDatabase } from './fixture.ts';

/*
 * chooseSiteAndChannel (and chooseSiteAndChannelIds, the same choice reading the ids alone), on the
 * database the run selects, with test/stl/fixture.ts's catalogue: where
 * the site is named by id or is the root, the site and the channel come from one statement (the
 * channel's columns joined beside the site's); every choice gives the rows Prisma's client reads
 * for it, field by field (dates, booleans and all), the site's content generation as it stands, and
 * the 404 the choice has always had.
 */

// A write makes site 1's generation other than 0: the joined read must carry the stored one.
const fixture = observedStlDatabase((handle) =>
  handle.db.channel.update({ where: { id: 12 }, data: { channelName: 'Tech' } }),
);
const { queries } = fixture;

type Choice = SiteChoice & ChannelChoice;

/** What the choice names, read through Prisma's client: the expected rows. */
async function expected(choice: Choice) {
  const { db } = fixture.database.handle;
  const site =
    choice.siteId !== undefined
      ? await db.site.findUnique({ where: { id: choice.siteId } })
      : await db.site.findFirst({ orderBy: [{ isRoot: 'desc' }, { taxis: 'asc' }, { id: 'asc' }] });
  if (site === null) return undefined;
  const where =
    choice.channelId !== undefined
      ? { id: choice.channelId }
      : choice.channelIndex !== undefined
        ? { indexName: choice.channelIndex }
        : choice.channelName !== undefined
          ? { channelName: choice.channelName }
          : { parentId: 0 };
  const channel = await db.channel.findFirst({
    where: { siteId: site.id, ...where },
    orderBy: [{ taxis: 'asc' }, { id: 'asc' }],
  });
  const stored = await db.contentGeneration.findUnique({ where: { siteId: site.id } });
  return { site, channel, generation: String(stored?.generation ?? 0) };
}

type Expected = NonNullable<Awaited<ReturnType<typeof expected>>>;

/** Each way of choosing, and what it answers of the expected rows. */
const WAYS = [
  ['every column', chooseSiteAndChannel, (want: Expected) => want],
  [
    'the ids alone',
    chooseSiteAndChannelIds,
    (want: Expected) => ({
      ...want,
      site: { id: want.site.id, siteDir: want.site.siteDir },
      channel: want.channel && { id: want.channel.id },
    }),
  ],
] as const;

describe.each(WAYS)('%s', (way, choose, answered) => {
  async function chosen(choice: Choice) {
    queries.length = 0;
    try {
      const { site, channel } = await choose(fixture.observed.reads, choice);
      const { generation, ...row } = site;
      return { site: row, channel, generation: String(generation), statements: queries.length };
    } catch (error) {
      return { error: (error as Error).message, statements: queries.length };
    }
  }
  const want = async (choice: Choice) => {
    const rows = await expected(choice);
    expect(rows?.channel).toBeTruthy();
    return answered(rows as Expected);
  };
  describe('one statement for a site named by id, or the root', () => {
    const found: Choice[] = [
      {},
      { siteId: 1 },
      { siteId: 1, channelId: 13 },
      { channelIndex: 'news' },
      { siteId: 1, channelName: 'News' },
      { siteId: 1, channelName: 'Tech' },
      { siteId: 2 },
      { siteId: 2, channelName: 'News' },
      { siteId: 3 },
    ];
    test.each(found)('%j: the rows Prisma reads, and the generation', async (choice) => {
      expect(await chosen(choice)).toEqual({ ...(await want(choice)), statements: 1 });
    });

    test('site 1 has a generation other than 0 (the case above proves it is read)', async () => {
      expect((await expected({ siteId: 1 }))?.generation).not.toBe('0');
    });

    const missing: [Choice, string][] = [
      [{ siteId: 99 }, 'Site 99 does not exist'],
      [{ siteId: 99, channelId: 1 }, 'Site 99 does not exist'],
      [{ siteId: 1, channelId: 21 }, 'Channel 21 does not exist in site 1'],
      [{ channelId: 999 }, 'Channel 999 does not exist in site 1'],
      [{ siteId: 3, channelIndex: 'news' }, "No channel with index 'news' exists in site 3"],
      [{ siteId: 1, channelName: 'Nope' }, "No channel named 'Nope' exists in site 1"],
    ];
    test.each(missing)('%j: 404 "%s"', async (choice, message) => {
      expect(await chosen(choice)).toEqual({ error: message, statements: 1 });
    });
  });

  describe('a site named by its directory: the site read, then the channel', () => {
    test('the same rows as by id', async () => {
      const byDir = await chosen({ siteDir: 'EN\\news/', channelName: 'News' });
      expect(byDir).toEqual({ ...(await want({ siteId: 2, channelName: 'News' })), statements: 2 });
    });

    test('an unknown directory, and an unknown channel in a known one', async () => {
      expect(await chosen({ siteDir: 'nowhere' })).toEqual({
        error: "No site has the directory 'nowhere'",
        statements: 1,
      });
      expect(await chosen({ siteDir: 'archive', channelId: 1 })).toEqual({
        error: 'Channel 1 does not exist in site 3',
        statements: 2,
      });
    });
  });

  if (way === 'the ids alone')
    test('no other column is read', async () => {
      await chosen({ siteId: 1, channelId: 13 });
      expect(queries).toHaveLength(1);
      for (const column of ['attributes', 'siteName', 'channelName', 'parentsPath', 'extras'])
        expect(queries[0]).not.toContain(`"${column}"`);
    });
});

describe('a site alone, reading its id and directory: the site chooseSite gives', () => {
  /** A choice's answer (or its error) and the statements it sent. */
  async function outcome<T>(choose: () => Promise<T>) {
    queries.length = 0;
    try {
      return { site: await choose(), statements: [...queries] };
    } catch (error) {
      return { error: (error as Error).message, statements: [...queries] };
    }
  }
  const choices: SiteChoice[] = [
    {},
    { siteId: 1 },
    { siteId: 2 },
    { siteDir: 'EN\\news/' },
    { siteId: 99 },
    { siteDir: 'nowhere' },
  ];
  test.each(choices)('%j', async (choice) => {
    const whole = await outcome(() => chooseSite(fixture.observed.reads, choice));
    const ids = await outcome(() => chooseSiteIds(fixture.observed.reads, choice));
    if ('error' in whole) expect(ids).toMatchObject({ error: whole.error });
    else {
      const { id, siteDir, generation } = whole.site;
      expect(ids).toMatchObject({ site: { id, siteDir, generation } });
      expect(Object.keys((ids as { site: object }).site).sort()).toEqual(['generation', 'id', 'siteDir']);
    }
    expect(ids.statements).toHaveLength(whole.statements.length);
    for (const statement of ids.statements)
      for (const column of ['attributes', 'siteName', 'tableName'])
        expect(statement).not.toContain(`"${column}"`);
  });
});
