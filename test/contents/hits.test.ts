import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { countHit, type HitTarget, periodStarts } from '../../src/domain/contents/hits.ts';
import { loadStlFixture } from '../stl/fixture.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/*
 * The anonymous hit counter (POST /api/stl/actions/hits) over HTTP, and its roll-over rule through
 * the domain call with a chosen "now", both on the database the run selects. The fixture is
 * test/stl/fixture.ts: 101 (channel 11, 10 hits) and 104 (channel 12, 20 hits) are approved; 103 is
 * pending, 107 is in the recycle bin, 109 belongs to site 2.
 */

let app: TestApp;

beforeAll(async () => {
  // Unlimited: this file's anonymous views come from one address (the limit has its own app below).
  app = await startTestApp({ config: { rateLimitPerMinute: 0 } });
  await loadStlFixture(app, new Date());
});
afterAll(async () => {
  await app.close();
});

const hit = (body: object) => app.request.post('/api/stl/actions/hits').send(body);
const row = (id: number) => app.db.content.findUniqueOrThrow({ where: { id } });
const DAY = 24 * 60 * 60 * 1000;

describe('counting', () => {
  test('no credentials: one more hit, the counters of a content never hit start at 1', async () => {
    const before = await row(101);
    expect(before.lastHitsDate).toBeNull();
    const response = await hit({ siteId: 1, channelId: 11, contentId: 101 });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ value: 11 });
    const after = await row(101);
    expect(after).toMatchObject({ hits: 11, hitsByDay: 1, hitsByWeek: 1, hitsByMonth: 1 });
    expect(after.lastHitsDate).toBeInstanceOf(Date);
  });

  test("the row's version rises, so the content's ETag changes; no event is recorded", async () => {
    const key = await app.createApiKey(['Contents']);
    const etag = async () =>
      (await app.request.get('/api/v1/contents/1/11/102').set('X-SS-API-KEY', key)).headers.etag;
    const events = await app.db.event.count();
    const before = await etag();
    expect((await hit({ siteId: 1, channelId: 11, contentId: 102 })).body).toEqual({ value: 31 });
    const after = await etag();
    expect(after).not.toEqual(before);
    const got = await app.request.get('/api/v1/contents/1/11/102').set('X-SS-API-KEY', key);
    expect(got.body.hits).toBe(31);
    expect(await app.db.event.count()).toBe(events);
  });

  test('autoIncrease false: the current hits, nothing written', async () => {
    const before = await row(104);
    const response = await hit({ siteId: 1, channelId: 12, contentId: 104, autoIncrease: false });
    expect(response.body).toEqual({ value: 20 });
    expect(await row(104)).toEqual(before);
  });

  test('a last hit in another month: every period counter restarts at 1', async () => {
    await app.db.content.update({
      where: { id: 105 },
      data: {
        hits: 7,
        hitsByDay: 4,
        hitsByWeek: 5,
        hitsByMonth: 6,
        lastHitsDate: new Date(Date.now() - 40 * DAY),
      },
    });
    expect((await hit({ siteId: 1, channelId: 13, contentId: 105 })).body).toEqual({ value: 8 });
    expect(await row(105)).toMatchObject({ hits: 8, hitsByDay: 1, hitsByWeek: 1, hitsByMonth: 1 });
  });

  test('concurrent hits are all counted', async () => {
    const before = await row(106);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => hit({ siteId: 1, channelId: 14, contentId: 106 })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200));
    // Each answer is the hits after its own increment: 40 different values, one per hit.
    const values = answers.map((answer) => answer.body.value as number).sort((a, b) => a - b);
    expect(values).toEqual(Array.from({ length: 40 }, (_, i) => before.hits + 1 + i));
    const after = await row(106);
    expect(after.hits).toBe(before.hits + 40);
    expect(after.version).toBe(before.version + 40);
  });
});

describe('refusals', () => {
  test.each([
    ['a pending content', { siteId: 1, channelId: 11, contentId: 103 }],
    ['a content in the recycle bin', { siteId: 1, channelId: 11, contentId: 107 }],
    ['a content of another channel', { siteId: 1, channelId: 12, contentId: 101 }],
    ['a content of another site', { siteId: 1, channelId: 21, contentId: 109 }],
    ['a content that does not exist', { siteId: 1, channelId: 11, contentId: 999 }],
  ])('404 for %s, nothing counted', async (_what, body) => {
    const before = await row(body.contentId).catch(() => null);
    const response = await hit(body);
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.detail).toBe(
      `No approved content ${body.contentId} in channel ${body.channelId} of site ${body.siteId}`,
    );
    expect(await row(body.contentId).catch(() => null)).toEqual(before);
  });

  test('400 for a body the contract refuses (a missing id, an unknown key, an id out of range, an empty object)', async () => {
    expect((await hit({ siteId: 1, channelId: 11 })).status).toBe(400);
    expect((await hit({ siteId: 1, channelId: 11, contentId: 101, title: 'x' })).status).toBe(400);
    expect((await hit({ siteId: 1, channelId: 11, contentId: 0 })).status).toBe(400);
    expect((await hit({})).status).toBe(400);
  });
});

describe('roll-over in the service time zone (the domain call, with a chosen now)', () => {
  const target: HitTarget = { siteId: 1, channelId: 11, contentId: 110 };
  /** A local wall-clock time. */
  const at = (year: number, month: number, day: number, hours = 12) => new Date(year, month - 1, day, hours);

  async function hitAfter(last: Date, now: Date) {
    await app.db.content.update({
      where: { id: target.contentId },
      data: { hits: 100, hitsByDay: 10, hitsByWeek: 20, hitsByMonth: 30, lastHitsDate: last },
    });
    expect(await countHit(app, target, now)).toBe(101);
    const { hits, hitsByDay, hitsByWeek, hitsByMonth, lastHitsDate } = await row(target.contentId);
    expect(lastHitsDate?.getTime()).toBe(now.getTime());
    return { hits, hitsByDay, hitsByWeek, hitsByMonth };
  }

  test('earlier the same day: every counter goes on', async () => {
    // Wednesday 4 March 2026.
    expect(await hitAfter(at(2026, 3, 4, 0), at(2026, 3, 4, 23))).toEqual({
      hits: 101,
      hitsByDay: 11,
      hitsByWeek: 21,
      hitsByMonth: 31,
    });
  });

  test('the day before, in the same week: the day restarts', async () => {
    expect(await hitAfter(at(2026, 3, 3, 23), at(2026, 3, 4, 0))).toEqual({
      hits: 101,
      hitsByDay: 1,
      hitsByWeek: 21,
      hitsByMonth: 31,
    });
  });

  test('the Sunday before (a new week begins on Monday), in the same month: day and week restart', async () => {
    expect(await hitAfter(at(2026, 3, 1, 23), at(2026, 3, 2, 0))).toEqual({
      hits: 101,
      hitsByDay: 1,
      hitsByWeek: 1,
      hitsByMonth: 31,
    });
  });

  test('the last day of the month before, in the same week: day and month restart, the week goes on', async () => {
    // Tuesday 31 March, then Wednesday 1 April 2026.
    expect(await hitAfter(at(2026, 3, 31, 23), at(2026, 4, 1, 0))).toEqual({
      hits: 101,
      hitsByDay: 1,
      hitsByWeek: 21,
      hitsByMonth: 1,
    });
  });

  test('across the new year, in the same week: day and month restart, the week goes on', async () => {
    // Wednesday 31 December 2025, then Thursday 1 January 2026.
    expect(await hitAfter(at(2025, 12, 31, 23), at(2026, 1, 1, 0))).toEqual({
      hits: 101,
      hitsByDay: 1,
      hitsByWeek: 21,
      hitsByMonth: 1,
    });
  });

  test('period starts: local midnight, the Monday of the week, the first of the month', () => {
    expect(periodStarts(at(2026, 3, 1, 15))).toEqual({
      day: at(2026, 3, 1, 0),
      week: at(2026, 2, 23, 0),
      month: at(2026, 3, 1, 0),
    });
    expect(periodStarts(at(2026, 3, 2, 0))).toEqual({
      day: at(2026, 3, 2, 0),
      week: at(2026, 3, 2, 0),
      month: at(2026, 3, 1, 0),
    });
  });
});

describe('rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ config: { rateLimitPerMinute: 3 } });
    await loadStlFixture(limited, new Date());
  });
  afterAll(async () => {
    await limited.close();
  });

  test('429 with Retry-After past the per-address limit, and that hit is not counted', async () => {
    const send = () =>
      limited.request.post('/api/stl/actions/hits').send({ siteId: 1, channelId: 11, contentId: 101 });
    for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await limited.db.content.findUniqueOrThrow({ where: { id: 101 } })).hits).toBe(13);
  });
});
