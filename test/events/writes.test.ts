import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { runCli } from '../../src/cli/run.ts';
import { md5Hex } from '../../src/domain/accounts/passwords.ts';
import type { EventRecord } from '../../src/domain/events/activity.ts';
import type { EventType } from '../../src/domain/events/types.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * Every write the API makes, one row of a table each, through HTTP on the test database (SQLite, or
 * PostgreSQL with TEST_DATABASE_URL). Each is sent twice:
 * - first while the database refuses every event row (a trigger the test installs): the write must
 *   fail and leave its table exactly as it was, which proves its event is inserted in the same
 *   transaction as its change (a write that recorded its event apart would keep its change);
 * - then normally: it must succeed and leave exactly its events (type, resource ids, site and
 *   channel, the caller as actor), none carrying password material or a key.
 * Then a write refused by a unique constraint (409), and several racing for one name, leave no
 * event of theirs.
 */

let app: TestApp;
let key: string;
let keyId: number;
let server: Listening;
const restarts: string[] = [];

const PASSWORD = 'Str0ng-enough-pass!';
const NEW_PASSWORD = 'An0ther-strong-pass!';
/** Values no event may contain. */
const secrets: string[] = [PASSWORD, NEW_PASSWORD, md5Hex(PASSWORD)];

beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all', {
    restart: async () => {
      restarts.push('restart');
      return true;
    },
  }));
  secrets.push(key);
  const row = await app.db.apiKey.findFirst({ orderBy: { id: 'desc' }, select: { id: true } });
  keyId = row?.id ?? 0;
  server = await listen(app.app);
}, 60_000);

afterAll(async () => {
  await refuseEvents(false);
  await server.close();
  await app.close();
});

interface Answer {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      'X-SS-API-KEY': key,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {};
  return { status: response.status, text, json };
}

/** Installs (or removes) a trigger that makes every insert into the event table fail. */
async function refuseEvents(on: boolean): Promise<void> {
  if (app.provider === 'sqlite') {
    await app.db.$executeRawUnsafe('DROP TRIGGER IF EXISTS test_refuse_events');
    if (on)
      await app.db.$executeRawUnsafe(
        `CREATE TRIGGER test_refuse_events BEFORE INSERT ON "Event"
         BEGIN SELECT RAISE(ABORT, 'event rows refused by the test'); END`,
      );
    return;
  }
  await app.db.$executeRawUnsafe('DROP TRIGGER IF EXISTS test_refuse_events ON "Event"');
  if (on) {
    await app.db.$executeRawUnsafe(
      `CREATE OR REPLACE FUNCTION test_refuse_event() RETURNS trigger LANGUAGE plpgsql AS
       $$ BEGIN RAISE EXCEPTION 'event rows refused by the test'; END $$`,
    );
    await app.db.$executeRawUnsafe(
      `CREATE TRIGGER test_refuse_events BEFORE INSERT ON "Event"
       FOR EACH ROW EXECUTE FUNCTION test_refuse_event()`,
    );
  }
}

type Table = 'content' | 'channel' | 'user' | 'administrator' | 'apiKey';

/** Every row of the table the write changes, to compare before and after a refused write. */
function rowsOf(table: Table): Promise<unknown[]> {
  const order = { orderBy: { id: 'asc' as const } };
  switch (table) {
    case 'content':
      return app.db.content.findMany(order);
    case 'channel':
      return app.db.channel.findMany(order);
    case 'user':
      return app.db.user.findMany(order);
    case 'administrator':
      return app.db.administrator.findMany(order);
    case 'apiKey':
      return app.db.apiKey.findMany(order);
  }
}

const lastEventId = async () =>
  (await app.db.event.findFirst({ orderBy: { id: 'desc' }, select: { id: true } }))?.id ?? 0;

async function eventsAfter(id: number): Promise<EventRecord[]> {
  const answer = await call('GET', `/api/v1/activity?limit=20`);
  expect(answer.status).toBe(200);
  const { events } = answer.json as unknown as { events: EventRecord[] };
  return events.filter((event) => event.id > id).reverse();
}

/** Ids of what earlier rows created, for the rows after them. */
const made: Record<string, number> = {};

interface WriteCase {
  name: string;
  method?: 'POST' | 'GET';
  path: () => string;
  body?: () => unknown;
  status: number;
  /** The table whose rows must be unchanged when the event cannot be recorded (none: restart). */
  table?: Table;
  /** The events it records, in order; the first describes the resource. */
  types: EventType[];
  resourceId: (answer: Answer) => number;
  siteId?: number;
  channelId?: number;
  /** The caller by default. */
  actor?: () => { type: string; id: number | null };
  /** Fields the first event's payload has (toMatchObject). */
  payload?: Record<string, unknown>;
  /** Keeps what the answer created for later rows. */
  keep?: (answer: Answer) => void;
}

const idOf = (answer: Answer) => Number(answer.json.id);
const valueIdOf = (answer: Answer) => Number((answer.json.value as { id: number }).id);

const WRITES: WriteCase[] = [
  {
    name: 'createContent',
    path: () => '/api/v1/contents/1/2',
    body: () => ({ title: 'Outbox story' }),
    status: 200,
    table: 'content',
    types: ['content.created'],
    resourceId: idOf,
    siteId: 1,
    channelId: 2,
    payload: { title: 'Outbox story' },
    keep: (answer) => {
      made.content = idOf(answer);
    },
  },
  {
    name: 'updateContent',
    path: () => `/api/v1/contents/1/2/${made.content}/actions/update`,
    body: () => ({ title: 'Outbox story, revised', hits: 3 }),
    status: 200,
    table: 'content',
    types: ['content.updated'],
    resourceId: () => made.content ?? 0,
    siteId: 1,
    channelId: 2,
    payload: { title: 'Outbox story, revised', hits: 3 },
  },
  {
    name: 'checkContents',
    path: () => '/api/v1/contents/actions/check',
    body: () => ({ siteId: 1, contents: [{ channelId: 2, id: made.content }] }),
    status: 200,
    table: 'content',
    types: ['content.checked'],
    resourceId: () => made.content ?? 0,
    siteId: 1,
    channelId: 2,
  },
  {
    name: 'deleteContent',
    path: () => `/api/v1/contents/1/2/${made.content}/actions/delete`,
    status: 200,
    table: 'content',
    types: ['content.deleted'],
    resourceId: () => made.content ?? 0,
    siteId: 1,
    channelId: 2,
  },
  {
    name: 'restoreContent',
    path: () => `/api/v1/contents/1/2/${made.content}/actions/restore`,
    status: 200,
    table: 'content',
    types: ['content.restored'],
    resourceId: () => made.content ?? 0,
    siteId: 1,
    channelId: 2,
  },
  {
    name: 'createChannel',
    path: () => '/api/v1/channels/1',
    body: () => ({ parentId: 2, channelName: 'Outbox' }),
    status: 200,
    table: 'channel',
    types: ['channel.created'],
    resourceId: idOf,
    siteId: 1,
    keep: (answer) => {
      made.channel = idOf(answer);
    },
  },
  {
    name: 'updateChannel',
    path: () => `/api/v1/channels/1/${made.channel}/actions/update`,
    body: () => ({ channelName: 'Outbox renamed' }),
    status: 200,
    table: 'channel',
    types: ['channel.updated'],
    resourceId: () => made.channel ?? 0,
    siteId: 1,
    payload: { channelName: 'Outbox renamed' },
  },
  {
    name: 'deleteChannel',
    path: () => `/api/v1/channels/1/${made.channel}/actions/delete`,
    status: 200,
    table: 'channel',
    types: ['channel.deleted'],
    resourceId: () => made.channel ?? 0,
    siteId: 1,
  },
  {
    name: 'createUser',
    path: () => '/api/v1/users',
    body: () => ({ userName: 'olive', password: PASSWORD, email: 'olive@example.com' }),
    status: 200,
    table: 'user',
    types: ['user.created'],
    resourceId: idOf,
    payload: { userName: 'olive' },
    keep: (answer) => {
      made.user = idOf(answer);
    },
  },
  {
    name: 'updateUser (fields)',
    path: () => `/api/v1/users/${made.user}/actions/update`,
    body: () => ({ displayName: 'Olive O.', mobile: '+15550001' }),
    status: 200,
    table: 'user',
    types: ['user.updated'],
    resourceId: () => made.user ?? 0,
    payload: { displayName: 'Olive O.', mobile: '+15550001' },
  },
  {
    name: 'updateUser (password and lock)',
    path: () => `/api/v1/users/${made.user}/actions/update`,
    body: () => ({ password: NEW_PASSWORD, locked: 'true' }),
    status: 200,
    table: 'user',
    types: ['user.updated', 'user.locked', 'user.passwordChanged'],
    resourceId: () => made.user ?? 0,
    payload: { locked: true },
  },
  {
    name: 'updateUser (unlock)',
    path: () => `/api/v1/users/${made.user}/actions/update`,
    body: () => ({ locked: 'false' }),
    status: 200,
    table: 'user',
    types: ['user.updated'],
    resourceId: () => made.user ?? 0,
    payload: { locked: false },
  },
  {
    name: 'resetUserPassword',
    path: () => '/api/v1/users/actions/resetPassword',
    body: () => ({ account: 'olive', password: md5Hex(NEW_PASSWORD), newPassword: PASSWORD }),
    status: 200,
    table: 'user',
    types: ['user.passwordChanged'],
    resourceId: () => made.user ?? 0,
    actor: () => ({ type: 'user', id: made.user ?? 0 }),
  },
  {
    name: 'deleteUser',
    path: () => `/api/v1/users/${made.user}/actions/delete`,
    status: 200,
    table: 'user',
    types: ['user.deleted'],
    resourceId: () => made.user ?? 0,
    payload: { userName: 'olive' },
  },
  {
    name: 'createAdministrator',
    path: () => '/api/v1/administrators',
    body: () => ({ userName: 'oscar', password: PASSWORD }),
    status: 200,
    table: 'administrator',
    types: ['administrator.created'],
    resourceId: valueIdOf,
    payload: { userName: 'oscar' },
    keep: (answer) => {
      made.administrator = valueIdOf(answer);
    },
  },
  {
    name: 'updateAdministrator (fields)',
    path: () => `/api/v1/administrators/${made.administrator}/actions/update`,
    body: () => ({ displayName: 'Oscar A.' }),
    status: 200,
    table: 'administrator',
    types: ['administrator.updated'],
    resourceId: () => made.administrator ?? 0,
    payload: { displayName: 'Oscar A.' },
  },
  {
    name: 'updateAdministrator (password and lock)',
    path: () => `/api/v1/administrators/${made.administrator}/actions/update`,
    body: () => ({ password: NEW_PASSWORD, isLockedOut: 'true' }),
    status: 200,
    table: 'administrator',
    types: ['administrator.updated', 'administrator.locked', 'administrator.passwordChanged'],
    resourceId: () => made.administrator ?? 0,
    payload: { isLockedOut: true },
  },
  {
    name: 'updateAdministrator (unlock)',
    path: () => `/api/v1/administrators/${made.administrator}/actions/update`,
    body: () => ({ isLockedOut: 'false' }),
    status: 200,
    table: 'administrator',
    types: ['administrator.updated'],
    resourceId: () => made.administrator ?? 0,
    payload: { isLockedOut: false },
  },
  {
    name: 'resetAdministratorPassword',
    path: () => '/api/v1/administrators/actions/resetPassword',
    body: () => ({ account: 'oscar', password: md5Hex(NEW_PASSWORD), newPassword: PASSWORD }),
    status: 200,
    table: 'administrator',
    types: ['administrator.passwordChanged'],
    resourceId: () => made.administrator ?? 0,
    actor: () => ({ type: 'administrator', id: made.administrator ?? 0 }),
  },
  {
    name: 'deleteAdministrator',
    path: () => `/api/v1/administrators/${made.administrator}/actions/delete`,
    status: 200,
    table: 'administrator',
    types: ['administrator.deleted'],
    resourceId: () => made.administrator ?? 0,
    payload: { userName: 'oscar' },
  },
  {
    name: 'createApiKey',
    path: () => '/api/v1/apiKeys',
    body: () => ({ title: 'outbox feed', scopes: ['Contents'] }),
    status: 201,
    table: 'apiKey',
    types: ['apiKey.created'],
    resourceId: (answer) => Number((answer.json.apiKey as { id: number }).id),
    payload: { title: 'outbox feed', scopes: 'Contents' },
    keep: (answer) => {
      made.apiKey = Number((answer.json.apiKey as { id: number }).id);
      secrets.push(String(answer.json.key));
    },
  },
  {
    name: 'updateApiKey',
    path: () => `/api/v1/apiKeys/${made.apiKey}/actions/update`,
    body: () => ({ title: 'outbox feed 2', rateLimitPerMinute: 60 }),
    status: 200,
    table: 'apiKey',
    types: ['apiKey.updated'],
    resourceId: () => made.apiKey ?? 0,
    payload: { title: 'outbox feed 2', rateLimitPerMinute: 60 },
  },
  {
    name: 'resetApiKey',
    path: () => `/api/v1/apiKeys/${made.apiKey}/actions/reset`,
    status: 200,
    table: 'apiKey',
    types: ['apiKey.reset'],
    resourceId: () => made.apiKey ?? 0,
    keep: (answer) => {
      secrets.push(String(answer.json.key));
    },
  },
  {
    name: 'deleteApiKey',
    path: () => `/api/v1/apiKeys/${made.apiKey}/actions/delete`,
    status: 200,
    table: 'apiKey',
    types: ['apiKey.deleted'],
    resourceId: () => made.apiKey ?? 0,
  },
  {
    name: 'restartSystem',
    path: () => '/api/v1/actions/restart',
    status: 200,
    types: ['system.restarted'],
    resourceId: () => 0,
  },
];

/** Field names of password material and credentials, which no payload may carry. */
const SECRET_NAME = /password|salt|hash|digest|secret|token|key$/i;

describe('every write records its events in its own transaction', () => {
  for (const write of WRITES) {
    test(`${write.name}: ${write.types.join(', ')}`, async () => {
      const send = () => call(write.method ?? 'POST', write.path(), write.body?.());
      if (write.table !== undefined) {
        const before = await rowsOf(write.table);
        const mark = await lastEventId();
        await refuseEvents(true);
        let refused: Answer;
        try {
          refused = await send();
        } finally {
          await refuseEvents(false);
        }
        expect(refused.status).toBeGreaterThanOrEqual(500);
        expect(await rowsOf(write.table)).toEqual(before);
        expect(await lastEventId()).toBe(mark);
      }

      const mark = await lastEventId();
      const answer = await send();
      expect({ status: answer.status, text: answer.text }).toEqual({
        status: write.status,
        text: expect.any(String),
      });
      write.keep?.(answer);
      const events = await eventsAfter(mark);
      expect(events.map((event) => event.type)).toEqual(write.types);
      for (const event of events)
        expect(event).toMatchObject({
          resourceType: write.types[0]?.split('.')[0],
          resourceId: write.resourceId(answer),
          siteId: write.siteId ?? null,
          channelId: write.channelId ?? (write.siteId === undefined ? null : expect.anything()),
          actor: write.actor?.() ?? { type: 'apiKey', id: keyId },
        });
      if (write.channelId !== undefined) expect(events[0]?.channelId).toBe(write.channelId);
      if (write.payload !== undefined) expect(events[0]?.payload).toMatchObject(write.payload);
      const payloads = JSON.stringify(events.map((event) => event.payload));
      for (const event of events)
        expect(Object.keys(event.payload).filter((name) => SECRET_NAME.test(name))).toEqual([]);
      for (const secret of secrets) expect(payloads).not.toContain(secret);
    });
  }

  test('the restart was handed to the supervisor once', () => {
    expect(restarts).toEqual(['restart']);
  });
});

describe('a write refused by a constraint leaves no event', () => {
  test('a taken user name is a 409 with no event', async () => {
    expect((await call('POST', '/api/v1/users', { userName: 'uma', password: PASSWORD })).status).toBe(200);
    const mark = await lastEventId();
    const again = await call('POST', '/api/v1/users', { userName: 'uma', password: PASSWORD });
    expect(again.status).toBe(409);
    expect(await lastEventId()).toBe(mark);
  });

  test('creations racing for one name: one succeeds, the others are 409, one event in all', async () => {
    const mark = await lastEventId();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        call('POST', '/api/v1/administrators', { userName: 'race', password: PASSWORD }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    const created = await app.db.administrator.findUnique({ where: { userName: 'race' } });
    const events = await app.db.event.findMany({ where: { id: { gt: mark } } });
    expect(events.map((event) => [event.type, event.resourceId])).toEqual([
      ['administrator.created', created?.id],
    ]);
  });
});

describe("the operator's `cms password`", () => {
  async function cmsPassword(kind: string, userName: string, password: string) {
    const lines: string[] = [];
    const code = await runCli(
      ['password', kind, userName],
      { out: (line) => lines.push(line), err: (line) => lines.push(line), readLine: async () => password },
      { DATABASE_URL: app.config.databaseUrl },
    );
    return { code, lines };
  }

  test('records the passwordChanged event, made by system, with no password in it', async () => {
    const uma = await app.db.user.findUniqueOrThrow({ where: { userName: 'uma' } });
    const mark = await lastEventId();
    expect(await cmsPassword('user', 'uma', NEW_PASSWORD)).toEqual({
      code: 0,
      lines: ["New password set for user 'uma'."],
    });
    const events = await app.db.event.findMany({ where: { id: { gt: mark } } });
    expect(events.map((event) => [event.type, event.resourceId, event.actorType, event.payload])).toEqual([
      ['user.passwordChanged', uma.id, 'system', '{}'],
    ]);
  });

  test('an unknown account changes nothing and records nothing', async () => {
    const mark = await lastEventId();
    const { code, lines } = await cmsPassword('administrator', 'nobody-here', NEW_PASSWORD);
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain("no administrator named 'nobody-here'");
    expect(await lastEventId()).toBe(mark);
  });
});
