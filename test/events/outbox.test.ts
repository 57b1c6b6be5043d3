import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { EventRecord } from '../../src/domain/events/activity.ts';
import { SYSTEM_ACTOR } from '../../src/domain/events/actor.ts';
import { recordEvent } from '../../src/domain/events/record.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * The outbox over HTTP, on the test database (SQLite, or PostgreSQL with TEST_DATABASE_URL): each
 * write leaves exactly one event in its own transaction, a failed or rolled-back write leaves none,
 * no event carries a secret, and the activity log reads them back with filters and a stable cursor.
 */

let app: TestApp;
let key: string;
let keyId: number;
let server: Listening;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all'));
  const row = await app.db.apiKey.findFirst({ orderBy: { id: 'desc' }, select: { id: true } });
  keyId = row?.id ?? 0;
  server = await listen(app.app);
}, 60_000);

afterAll(async () => {
  await server.close();
  await app.close();
});

async function call(method: string, path: string, body?: unknown, credential: string | null = key) {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      ...(credential === null ? {} : { 'X-SS-API-KEY': credential }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

async function activity(query: Record<string, string> = {}) {
  const result = await call('GET', `/api/v1/activity?${new URLSearchParams(query)}`);
  expect(result.status).toBe(200);
  return result.json as { events: EventRecord[]; next: number | null };
}

const eventCount = () => app.db.event.count();

describe('the outbox', () => {
  test('a content update records one content.updated event with the fields it set and its caller', async () => {
    const before = await eventCount();
    const result = await call('POST', '/api/v1/contents/1/2/1/actions/update', { title: 'Renamed', hits: 7 });
    expect(result.status).toBe(200);
    expect(await eventCount()).toBe(before + 1);
    const [event] = (await activity({ limit: '1' })).events;
    expect(event).toMatchObject({
      type: 'content.updated',
      resourceType: 'content',
      resourceId: 1,
      siteId: 1,
      channelId: 2,
      actor: { type: 'apiKey', id: keyId },
      payload: { title: 'Renamed', hits: 7 },
    });
  });

  test('a write that fails leaves no event', async () => {
    const before = await eventCount();
    expect((await call('POST', '/api/v1/contents/1/2/999/actions/update', { title: 'x' })).status).toBe(404);
    expect((await call('POST', '/api/v1/channels/1/99/actions/update', { channelName: 'x' })).status).toBe(
      404,
    );
    expect((await call('POST', '/api/v1/apiKeys/9999/actions/delete')).status).toBe(404);
    expect(await eventCount()).toBe(before);
  });

  test('a rolled-back transaction takes its event with it; a committed one keeps it', async () => {
    const before = await eventCount();
    await expect(
      app.db.$transaction(async (tx) => {
        await tx.content.update({ where: { id: 2 }, data: { title: 'never' } });
        await recordEvent(tx, {
          type: 'content.updated',
          resourceId: 2,
          payload: { title: 'never' },
          actor: SYSTEM_ACTOR,
        });
        throw new Error('the write fails after its event');
      }),
    ).rejects.toThrow('the write fails after its event');
    expect(await eventCount()).toBe(before);
    expect((await app.db.content.findUnique({ where: { id: 2 } }))?.title).not.toBe('never');
    await app.db.$transaction(async (tx) => {
      await tx.content.update({ where: { id: 2 }, data: { title: 'kept' } });
      await recordEvent(tx, {
        type: 'content.updated',
        resourceId: 2,
        payload: { title: 'kept' },
        actor: SYSTEM_ACTOR,
      });
    });
    expect(await eventCount()).toBe(before + 1);
    const [event] = (await activity({ limit: '1' })).events;
    expect(event).toMatchObject({
      type: 'content.updated',
      resourceId: 2,
      actor: { type: 'system', id: null },
    });
  });

  test('content delete, channel update, API key and user writes each record their event, with no secret', async () => {
    expect((await call('POST', '/api/v1/contents/1/4/5/actions/delete')).status).toBe(200);
    expect(
      (await call('POST', '/api/v1/channels/1/2/actions/update', { channelName: 'Headlines' })).status,
    ).toBe(200);
    const created = await call('POST', '/api/v1/apiKeys', { title: 'feed', scopes: ['Contents'] });
    expect(created.status).toBe(201);
    const issued = created.json as { key: string; apiKey: { id: number } };
    const reset = await call('POST', `/api/v1/apiKeys/${issued.apiKey.id}/actions/reset`);
    expect(reset.status).toBe(200);
    const newKey = (reset.json as { key: string }).key;
    expect(
      (await call('POST', `/api/v1/apiKeys/${issued.apiKey.id}/actions/update`, { title: 'feed 2' })).status,
    ).toBe(200);
    expect((await call('POST', `/api/v1/apiKeys/${issued.apiKey.id}/actions/delete`)).status).toBe(200);
    const password = 'Str0ng-enough-pass!';
    const user = await call('POST', '/api/v1/users', { userName: 'eve', password });
    expect(user.status).toBe(200);

    const { events } = await activity({ limit: '7' });
    expect(events.map((e) => e.type)).toEqual([
      'user.created',
      'apiKey.deleted',
      'apiKey.updated',
      'apiKey.reset',
      'apiKey.created',
      'channel.updated',
      'content.deleted',
    ]);
    expect(events[5]?.payload).toEqual({ channelName: 'Headlines' });
    expect(events[4]).toMatchObject({
      resourceId: issued.apiKey.id,
      payload: { title: 'feed', scopes: 'Contents' },
    });
    const stored = JSON.stringify(await app.db.event.findMany());
    for (const secret of [issued.key, newKey, password, key]) expect(stored).not.toContain(secret);
    expect(stored).not.toMatch(/passwordHash|passwordSalt|digest/);
  });
  test('content create, check and restore, channel create and delete each record their event', async () => {
    const created = await call('POST', '/api/v1/contents/1/2', { title: 'Brand new' });
    expect(created.status).toBe(200);
    const contentId = (created.json as { id: number }).id;
    const checked = await call('POST', '/api/v1/contents/actions/check', {
      siteId: 1,
      contents: [{ channelId: 2, id: contentId }],
    });
    expect(checked.status).toBe(200);
    expect((await call('POST', `/api/v1/contents/1/2/${contentId}/actions/delete`)).status).toBe(200);
    expect((await call('POST', `/api/v1/contents/1/2/${contentId}/actions/restore`)).status).toBe(200);
    const channel = await call('POST', '/api/v1/channels/1', { parentId: 2, channelName: 'Events' });
    expect(channel.status).toBe(200);
    const channelId = (channel.json as { id: number }).id;
    expect((await call('POST', `/api/v1/channels/1/${channelId}/actions/delete`)).status).toBe(200);

    const { events } = await activity({ limit: '6' });
    expect(events.map((e) => [e.type, e.resourceId])).toEqual([
      ['channel.deleted', channelId],
      ['channel.created', channelId],
      ['content.restored', contentId],
      ['content.deleted', contentId],
      ['content.checked', contentId],
      ['content.created', contentId],
    ]);
    expect(events[5]).toMatchObject({ siteId: 1, channelId: 2, payload: { title: 'Brand new' } });
  });
});

describe('the activity log', () => {
  test('filters by type (with wildcards), resource, actor and time range, newest first', async () => {
    const apiKeyEvents = (await activity({ type: 'apiKey.*' })).events;
    expect(apiKeyEvents.length).toBeGreaterThanOrEqual(4);
    expect(apiKeyEvents.every((e) => e.type.startsWith('apiKey.'))).toBe(true);
    const ids = apiKeyEvents.map((e) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);

    const one = (await activity({ resourceType: 'content', resourceId: '1' })).events;
    expect(one.map((e) => e.type)).toEqual(['content.updated']);
    const mine = (await activity({ actorType: 'apiKey', actorId: String(keyId) })).events;
    expect(mine.length).toBeGreaterThanOrEqual(7);
    expect(mine.every((e) => e.actor.type === 'apiKey' && e.actor.id === keyId)).toBe(true);

    expect((await activity({ until: '2000-01-01 00:00:00' })).events).toEqual([]);
    const recent = (await activity({ since: '2000-01-01 00:00:00', type: 'content.deleted' })).events;
    expect(recent.map((e) => e.resourceId).at(-1)).toBe(5);
    expect(recent.every((e) => e.type === 'content.deleted')).toBe(true);
  });

  test('pages by cursor, unshifted by events recorded between pages', async () => {
    const first = await activity({ limit: '3' });
    expect(first.events).toHaveLength(3);
    expect(first.next).toBe(first.events[2]?.id);
    // New writes land above the first page, not inside the next one.
    for (let i = 0; i < 3; i += 1)
      expect((await call('POST', '/api/v1/contents/1/2/1/actions/update', { hits: 100 + i })).status).toBe(
        200,
      );
    const second = await activity({ limit: '3', after: String(first.next) });
    const all = (await activity({ limit: '200' })).events.map((e) => e.id);
    const start = all.indexOf(first.events[2]?.id ?? -1);
    expect(second.events.map((e) => e.id)).toEqual(all.slice(start + 1, start + 4));
    let after: number | null = first.next;
    let seen = 3;
    while (after !== null) {
      const page = await activity({ limit: '3', after: String(after) });
      seen += page.events.length;
      after = page.next;
    }
    expect(seen).toBe(all.length - 3);
  });

  test('refuses a bad filter (400), no credential (401) and a key without Administrators (403)', async () => {
    const bad = await call('GET', '/api/v1/activity?type=nothing.real');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('type');
    expect((await call('GET', '/api/v1/activity?since=yesterday')).status).toBe(400);
    expect((await call('GET', '/api/v1/activity?limit=0')).status).toBe(400);
    expect((await call('GET', '/api/v1/activity', undefined, null)).status).toBe(401);
    const contentsOnly = await app.createApiKey(['Contents']);
    expect((await call('GET', '/api/v1/activity', undefined, contentsOnly)).status).toBe(403);
  });
});
