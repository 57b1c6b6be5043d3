import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { sql } from '../../src/db/sql.ts';
import { formBSelection, selectFields } from '../../src/domain/contents/fields.ts';
import { toContentFormB } from '../../src/domain/contents/forms.ts';
import { KEPT_RECORD_UNITS } from '../../src/domain/contents/recordTexts.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { type Listening, listen } from '../support/server.ts';
import { loadStlFixture } from './fixture.ts';

/*
 * stl/contents answers its records from the texts each process keeps of them
 * (src/domain/contents/recordTexts.ts). Whatever changes a record — the service's own writes, a hit,
 * plain writes of another process that the service does not see (Prisma's client, raw SQL on the
 * same database; a write of the hit counter alone, which moves neither the version nor, on SQLite,
 * the site's generation) — the next answer is what the database holds, field by field, in every
 * selection of fields. Both databases. Fixture: test/stl/fixture.ts (approved contents of site 1:
 * 101 102 104 105 106 108 110).
 */

let app: TestApp;
let key: string;
let server: Listening;

beforeAll(async () => {
  app = await startTestApp({ config: { rateLimitPerMinute: 0 } });
  await loadStlFixture(app, new Date());
  key = await app.createApiKey(['Contents', 'STL']);
  server = await listen(app.app);
});
afterAll(async () => {
  await server?.close();
  await app?.close();
});

type Record = { [field: string]: unknown; id: number };

const stl = async (query: { [name: string]: string } = {}): Promise<Record[]> => {
  const params = new URLSearchParams({ siteId: '1', scope: 'All', totalNum: '0', ...query });
  const response = await fetch(`${server.base}/api/v1/stl/contents?${params}`, {
    headers: { 'x-ss-api-key': key },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { value: Record[] }).value;
};

/** What the database holds for these ids, in form B (or its selection of `fields`), in their order. */
const held = async (ids: readonly number[], fields?: string): Promise<unknown[]> => {
  const rows = await app.db.content.findMany({ where: { id: { in: [...ids] } } });
  const byId = new Map(rows.map((row) => [row.id, row]));
  const selection = formBSelection(fields);
  return ids.map((id) => {
    const row = byId.get(id);
    if (row === undefined) throw new Error(`no content ${id}`);
    // Through JSON, as the answer comes.
    return JSON.parse(JSON.stringify(selection ? selectFields(row, selection) : toContentFormB(row)));
  });
};

const ids = (records: readonly Record[]) => records.map(({ id }) => id);

describe('stl/contents from kept record texts', () => {
  test('a page answered again is what the database holds, field by field', async () => {
    const first = await stl();
    expect(first.length).toBe(7);
    expect(first).toEqual(await held(ids(first)));
    const again = await stl();
    expect(again).toEqual(first);
  });

  test("the service's own write shows in the next answer", async () => {
    const before = await stl();
    const target = before[1] as Record;
    const response = await fetch(
      `${server.base}/api/v1/contents/1/${target.channelId}/${target.id}/actions/update`,
      {
        method: 'POST',
        headers: { 'x-ss-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Written by the service', summary: 'A summary' }),
      },
    );
    expect(response.status).toBe(200);
    const after = await stl();
    expect(after.find(({ id }) => id === target.id)).toMatchObject({
      title: 'Written by the service',
      settingsXml: expect.stringContaining('summary=A%20summary'),
    });
    expect(after).toEqual(await held(ids(after)));
  });

  test('a write by another process, which leaves the version as it was, shows in the next answer', async () => {
    const before = await stl();
    const target = before[2] as Record;
    const version = async () =>
      (await app.db.content.findUniqueOrThrow({ where: { id: target.id } })).version;
    const versionBefore = await version();
    await app.db.$executeRaw(
      sql`UPDATE "Content" SET "title" = ${'Written elsewhere'}, "groupNames" = ${'x,y'} WHERE "id" = ${target.id}`,
    );
    const after = await stl();
    expect(after.find(({ id }) => id === target.id)).toMatchObject({
      title: 'Written elsewhere',
      groupNameCollection: 'x,y',
    });
    expect(await version()).toBe(versionBefore);
    expect(after).toEqual(await held(ids(after)));
  });

  test('a hit counted, and a hit counter written alone, show in the next answer', async () => {
    const before = await stl();
    const target = before[0] as Record;
    const hit = await fetch(`${server.base}/api/stl/actions/hits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ siteId: 1, channelId: target.channelId, contentId: target.id }),
    });
    expect(hit.status).toBe(200);
    const counted = await stl();
    expect(counted.find(({ id }) => id === target.id)?.hits).toBe((target.hits as number) + 1);
    // Neither the version nor (SQLite) the generation moves: the hits are compared themselves.
    await app.db.$executeRaw(sql`UPDATE "Content" SET "hits" = ${4321} WHERE "id" = ${target.id}`);
    const written = await stl();
    expect(written.find(({ id }) => id === target.id)?.hits).toBe(4321);
    expect(written).toEqual(await held(ids(written)));
    // The Hits order, whose picks are never kept, reads the same texts.
    const byHits = await stl({ order: 'Hits' });
    expect(byHits[0]).toEqual(written.find(({ id }) => id === target.id));
  });

  test('each selection of fields has texts of its own', async () => {
    const some = await stl({ fields: 'id,title' });
    expect(some).toEqual(await held(ids(some), 'id,title'));
    expect(Object.keys(some[0] as Record)).toEqual(['id', 'title']);
    const whole = await stl();
    expect(whole).toEqual(await held(ids(whole)));
    expect(ids(some)).toEqual(ids(whole));
    // Without the id: in the whole answer's order.
    const other = await stl({ fields: 'title,hits' });
    expect(other).toEqual(await held(ids(whole), 'title,hits'));
    expect(await stl({ fields: 'id,title' })).toEqual(some);
    expect(await stl()).toEqual(whole);
  });

  test('a record longer than a kept text is answered whole, every time', async () => {
    const before = await stl();
    const target = before[3] as Record;
    const summary = `${'é'.repeat(KEPT_RECORD_UNITS)}"\\`;
    await app.db.content.update({ where: { id: target.id }, data: { summary } });
    for (let round = 0; round < 2; round++) {
      const after = await stl();
      expect(after).toEqual(await held(ids(after)));
      expect(after.find(({ id }) => id === target.id)?.settingsXml).toContain(encodeURIComponent(summary));
    }
  });

  test('a content deleted since is left out; one approved since comes in', async () => {
    const before = await stl();
    const gone = before[0] as Record;
    await app.db.content.delete({ where: { id: gone.id } });
    const after = await stl();
    expect(ids(after)).toEqual(ids(before).filter((id) => id !== gone.id));
    expect(after).toEqual(await held(ids(after)));
  });
});
