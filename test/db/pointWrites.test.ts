import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { NO_POINT_WRITES } from '../../src/db/pointWrites.ts';
import { createContent, TOP_TAXIS_START } from '../../src/domain/contents/create.ts';
import { updateContent } from '../../src/domain/contents/update.ts';
import { actorOf } from '../../src/domain/events/actor.ts';
import { type Principal, SCOPES } from '../../src/domain/principal.ts';
import { PreconditionFailed } from '../../src/domain/versions.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/database.ts';

/*
 * A content's create and update through the point writes (src/db/pointWrites.ts, SQLite's fast
 * path; on PostgreSQL the update in one statement, the create in one read and one statement) give
 * the row, the answer and the event the ordinary path (writeTransaction on Prisma's client) gives;
 * where the fast path cannot run or declines, the ordinary path answers.
 */

const sqlite = testServerUrl() === undefined;
let database: TestDatabase;
const statements: string[] = [];
let siteId: number;
let channelId: number;
const principal: Principal = { kind: 'apiKey', apiKeyId: 1, scopes: new Set(SCOPES) };
const actor = actorOf(principal);

beforeAll(async () => {
  database = await createTestDatabase({ onQuery: (sqlText) => statements.push(sqlText) });
  const { db } = database.handle;
  const site = await db.site.create({ data: { siteDir: 'writes', siteName: 'Writes' } });
  siteId = site.id;
  channelId = (await db.channel.create({ data: { guid: 'c1', siteId, channelName: 'One' } })).id;
});
afterAll(() => database.drop());

const ordinary = () => ({ db: database.handle.db, writes: NO_POINT_WRITES });

/** The statements `write` sent. */
async function sent<T>(write: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  statements.length = 0;
  const result = await write();
  return { result, sql: [...statements] };
}

const body = {
  title: 'Both ways',
  subTitle: 'sub',
  tagNames: ['a', 'b'],
  groupNames: ['g'],
  hot: true,
  addDate: '2024-05-01T10:00:00.000Z',
  checked: true,
};

/** A content's row without what differs between two creates by design. */
function comparable(row: Record<string, unknown>) {
  const { id, guid, taxis, createdDate, lastModifiedDate, lastEditDate, ...rest } = row;
  return rest;
}

test('a create gives the row and the event the ordinary path gives, one taxis higher', async () => {
  const { db } = database.handle;
  const before = await createContent(ordinary(), { siteId, channelId }, body, principal);
  const { result: after, sql } = await sent(() =>
    createContent(database.handle, { siteId, channelId }, body, principal),
  );
  expect(sql.includes('BEGIN IMMEDIATE')).toBe(sqlite);
  // PostgreSQL: one read (site, channel, name), then the row and its event in one statement.
  if (!sqlite) {
    expect(sql).toHaveLength(2);
    expect(sql[1]?.startsWith('WITH "created"')).toBe(true);
  }
  expect(after.id).toBe(before.id + 1);
  expect(after.taxis).toBe(before.taxis + 1);
  expect(comparable(after as unknown as Record<string, unknown>)).toEqual(
    comparable(before as unknown as Record<string, unknown>),
  );
  const rows = await db.content.findMany({
    where: { id: { in: [before.id, after.id] } },
    orderBy: { id: 'asc' },
  });
  expect(rows).toHaveLength(2);
  expect(comparable(rows[1] as unknown as Record<string, unknown>)).toEqual(
    comparable(rows[0] as unknown as Record<string, unknown>),
  );
  expect(rows[1]?.createdDate).toBeInstanceOf(Date);
  const events = await db.event.findMany({
    where: { type: 'content.created', resourceId: { in: [before.id, after.id] } },
    orderBy: { id: 'asc' },
  });
  expect(events.map((event) => [event.resourceId, event.payload, event.siteId, event.channelId])).toEqual([
    [before.id, JSON.stringify({ title: 'Both ways', checked: true, checkedLevel: 1 }), siteId, channelId],
    [after.id, JSON.stringify({ title: 'Both ways', checked: true, checkedLevel: 1 }), siteId, channelId],
  ]);
  expect(events[1]?.createdAt).toBeInstanceOf(Date);
  expect(events[1]?.dispatched).toBe(false);
});

test('an update gives the answer, the row and the event the ordinary path gives', async () => {
  const { db } = database.handle;
  const content = await createContent(
    database.handle,
    { siteId, channelId },
    { title: 'To update' },
    principal,
  );
  const target = { siteId, channelId, id: content.id };
  const change = { title: 'Updated', tagNames: ['x'], top: true, lastEditDate: '2025-01-02T03:04:05.000Z' };
  const first = await updateContent(ordinary(), target, change, actor);
  const { result: second, sql } = await sent(() => updateContent(database.handle, target, change, actor));
  expect(sql.includes('BEGIN IMMEDIATE')).toBe(sqlite);
  // PostgreSQL: one statement, the update and its event, without a transaction around it.
  expect(sql.some((text) => text.startsWith('WITH "updated"'))).toBe(!sqlite);
  expect(sql.some((text) => text.includes('BEGIN'))).toBe(sqlite);
  expect(second.version).toBe(first.version + 1);
  const { lastModifiedDate: _a, ...firstRest } = first.content;
  const { lastModifiedDate: _b, ...secondRest } = second.content;
  expect(secondRest).toEqual(firstRest);
  const row = await db.content.findUnique({ where: { id: content.id } });
  expect(row?.title).toBe('Updated');
  expect(row?.tagNames).toBe('x');
  expect(row?.top).toBe(true);
  expect(row?.lastEditDate.toISOString()).toBe('2025-01-02T03:04:05.000Z');
  expect(row?.version).toBe(second.version);
  const events = await db.event.findMany({
    where: { type: 'content.updated', resourceId: content.id },
    orderBy: { id: 'asc' },
  });
  const payload = { title: 'Updated', tagNames: 'x', top: true, lastEditDate: '2025-01-02T03:04:05.000Z' };
  expect(events.map((event) => JSON.parse(event.payload))).toEqual([payload, payload]);
  expect(events[1]?.payload).toBe(events[0]?.payload);
});

test('a stale version, a missing content or site is answered by the ordinary path, nothing written', async () => {
  const { db } = database.handle;
  const content = await createContent(database.handle, { siteId, channelId }, { title: 'Kept' }, principal);
  const target = { siteId, channelId, id: content.id };
  const events = () => db.event.count({ where: { resourceId: content.id, type: 'content.updated' } });
  await expect(
    updateContent(database.handle, target, { title: 'Stale' }, actor, { kind: 'versions', versions: [999] }),
  ).rejects.toBeInstanceOf(PreconditionFailed);
  await expect(
    updateContent(database.handle, { ...target, id: content.id + 1000 }, { title: 'x' }, actor),
  ).rejects.toThrow(`Content ${content.id + 1000} does not exist`);
  await expect(
    updateContent(database.handle, { ...target, siteId: siteId + 1000 }, { title: 'x' }, actor),
  ).rejects.toThrow(`Site ${siteId + 1000}`);
  await expect(
    createContent(database.handle, { siteId, channelId: channelId + 1000 }, { title: 'x' }, principal),
  ).rejects.toThrow(`Channel ${channelId + 1000} does not exist in site ${siteId}`);
  await expect(
    createContent(database.handle, { siteId, channelId }, { title: '  ' }, principal),
  ).rejects.toThrow();
  expect(await events()).toBe(0);
  expect((await db.content.findUnique({ where: { id: content.id } }))?.title).toBe('Kept');
});

test("a create's taxis: one above the highest of its kind, top or not, as the ordinary path sets it", async () => {
  const { db } = database.handle;
  const channel = (await db.channel.create({ data: { guid: 'c-taxis', siteId, channelName: 'Taxis' } })).id;
  const target = { siteId, channelId: channel };
  const both = async (top: boolean) => {
    const first = await createContent(ordinary(), target, { title: 'Ordinary', top }, principal);
    const { result: second, sql } = await sent(() =>
      createContent(database.handle, target, { title: 'Fast', top }, principal),
    );
    expect(sql.some((text) => text.startsWith('WITH "created"'))).toBe(!sqlite);
    return [first.taxis, second.taxis];
  };
  // An empty channel: each kind starts above its floor; the kinds do not mix.
  const fast = await createContent(database.handle, target, { title: 'First top', top: true }, principal);
  expect(fast.taxis).toBe(TOP_TAXIS_START + 1);
  expect(await both(true)).toEqual([TOP_TAXIS_START + 2, TOP_TAXIS_START + 3]);
  expect(await both(false)).toEqual([1, 2]);
  // A recycled content does not count; a negative taxis counts as the floor.
  await db.content.updateMany({ where: { channelId: channel, top: false }, data: { taxis: -5 } });
  await db.content.create({
    data: {
      guid: 'recycled-high',
      siteId,
      channelId: channel,
      title: 'Recycled',
      taxis: 900,
      recycled: true,
    },
  });
  expect(await both(false)).toEqual([1, 2]);
  expect(await both(true)).toEqual([TOP_TAXIS_START + 4, TOP_TAXIS_START + 5]);
});

test('a create the ordinary path answers otherwise is left to it, nothing written', async () => {
  const { db } = database.handle;
  const count = () =>
    Promise.all([db.content.count(), db.event.count({ where: { type: 'content.created' } })]);
  const before = await count();
  const refused = async (target: { siteId: number; channelId: number }, created: object, message: string) => {
    const { result, sql } = await sent(() =>
      createContent(database.handle, target, { title: 'x', ...created }, principal).then(
        () => 'written',
        (error: unknown) => error,
      ),
    );
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toContain(message);
    // Whatever the fast path did, the ordinary path ran after it and gave the answer.
    if (!sqlite) expect(sql.some((text) => text.includes('"public"."Site"'))).toBe(true);
  };
  await refused(
    { siteId, channelId: channelId + 1000 },
    {},
    `Channel ${channelId + 1000} does not exist in site ${siteId}`,
  );
  await refused({ siteId: siteId + 1000, channelId }, {}, `Site ${siteId + 1000} does not exist`);
  await refused({ siteId, channelId }, { title: '  ' }, 'title');
  await refused({ siteId, channelId }, { checkedLevel: 7 }, 'checkedLevel');
  await refused({ siteId, channelId }, { hits: -1 }, 'hits');
  // A statement PostgreSQL refuses (a number out of its integer range, SQLSTATE 22003; SQLite's
  // integers are wider) wrote nothing; the ordinary path then meets the same refusal.
  const { writes } = database.handle;
  const statement = writes.statement;
  if (statement !== undefined) {
    const codes: unknown[] = [];
    const watched = async (sqlText: string, params: readonly unknown[]) =>
      statement(sqlText, params).catch((error: { code?: unknown }) => {
        codes.push(error.code);
        throw error;
      });
    const { sql } = await sent(() =>
      expect(
        createContent(
          { db, writes: { ...writes, statement: watched } },
          { siteId, channelId },
          { title: 'x', sourceId: 2 ** 31 },
          principal,
        ),
      ).rejects.toThrow(),
    );
    expect(codes).toEqual(['22003']);
    expect(sql.some((text) => text.includes('"public"."Site"'))).toBe(true);
  }
  expect(await count()).toEqual(before);
});

test("a connection lost during the create's statement is not tried again on the ordinary path", async () => {
  const { db, writes } = database.handle;
  if (writes.statement === undefined) return; // PostgreSQL only
  const real = writes.statement;
  const lost = new Error('Connection terminated unexpectedly');
  const sentTexts: string[] = [];
  const failing = {
    ...writes,
    statement: async (sqlText: string, params: readonly unknown[]) => {
      sentTexts.push(sqlText);
      if (sqlText.startsWith('WITH "created"')) throw lost;
      return real(sqlText, params);
    },
  };
  const before = await db.content.count();
  await expect(
    createContent({ db, writes: failing }, { siteId, channelId }, { title: 'Lost' }, principal),
  ).rejects.toBe(lost);
  expect(sentTexts).toHaveLength(2);
  expect(await db.content.count()).toBe(before);
});

test('inside another transaction on the connection, the point writes step aside', async () => {
  const { db, writes } = database.handle;
  let inside: number | undefined = 0;
  await db.$transaction(async (tx) => {
    await tx.site.findFirst({ where: { id: siteId } });
    inside = writes.transaction(() => 1);
  });
  expect(inside).toBeUndefined();
  // Outside it, the SQLite connection takes the write (PostgreSQL has no fast path).
  expect(writes.transaction(() => 2)).toBe(sqlite ? 2 : undefined);
});
