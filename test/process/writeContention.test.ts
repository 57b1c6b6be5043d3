import { afterEach, describe, expect, test } from '@jest/globals';
import { createEmptyDatabase, type EmptyDatabase, testServerUrl } from '../support/database.ts';
import { bootstrapKeyOf, freePort, type Service, startService, stopService } from './processes.ts';

/*
 * Issue 16 §2: with the default configuration (two workers, each with its own connection to the
 * same database), concurrent writers queue and all succeed; none is answered "unavailable" while
 * the database is fine. Mixed writes: the same content, the same channel, other contents,
 * creations of contents and channels, reviews, restores from the bin, and reads between them.
 */

const provider = testServerUrl() ? 'postgresql' : 'sqlite';

let database: EmptyDatabase | undefined;
let service: Service | undefined;

afterEach(async () => {
  await stopService(service);
  service = undefined;
  await database?.drop();
  database = undefined;
});

interface Answer {
  status: number;
  body: unknown;
}

function client(port: number, key: string) {
  return async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: {
        'X-SS-API-KEY': key,
        ...(body !== undefined && { 'Content-Type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: response.status, body: parsed };
  };
}

function idOf(answer: Answer): number {
  expect(answer.status).toBe(200);
  const id = (answer.body as { id?: unknown }).id;
  expect(typeof id).toBe('number');
  return id as number;
}

describe(`200 concurrent writes on ${provider}, default workers`, () => {
  test('every write succeeds and the final state counts them all', async () => {
    database = await createEmptyDatabase();
    const port = await freePort();
    // WORKERS is left unset: the default, two worker processes.
    service = startService({ DATABASE_URL: database.url, PORT: String(port), SEED_DEMO: 'true' });
    await service.waitFor(/"msg":"listening"/, 90_000);
    const key = bootstrapKeyOf(service.output());
    if (key === undefined) throw new Error(`no bootstrap key in:\n${service.output()}`);
    const call = client(port, key);

    const channel = idOf(await call('POST', '/api/v1/channels/1', { parentId: 1, channelName: 'busy' }));
    const contents: number[] = [];
    for (let i = 0; i < 15; i++) {
      contents.push(idOf(await call('POST', `/api/v1/contents/1/${channel}`, { title: `seed ${i}` })));
    }
    const [same, ...rest] = contents as [number, ...number[]];
    const others = rest.slice(0, 4);
    const binned = rest.slice(4);
    for (const id of binned) {
      expect((await call('POST', `/api/v1/contents/1/${channel}/${id}/actions/delete`)).status).toBe(200);
    }
    const doomed: number[] = [];
    for (let i = 0; i < 5; i++) {
      doomed.push(
        idOf(await call('POST', '/api/v1/channels/1', { parentId: 1, channelName: `doomed ${i}` })),
      );
    }

    const requests: Array<{ name: string; run: () => Promise<Answer> }> = [];
    const titles = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const title = `same ${i}`;
      titles.add(title);
      requests.push({
        name: 'update the same content',
        run: () => call('POST', `/api/v1/contents/1/${channel}/${same}/actions/update`, { title }),
      });
    }
    for (let i = 0; i < 40; i++) {
      const id = others[i % others.length] as number;
      requests.push({
        name: 'update another content',
        run: () =>
          call('POST', `/api/v1/contents/1/${channel}/${id}/actions/update`, { title: `other ${i}` }),
      });
    }
    for (let i = 0; i < 40; i++) {
      requests.push({
        name: 'create a content in the same channel',
        run: () => call('POST', `/api/v1/contents/1/${channel}`, { title: `new ${i}` }),
      });
    }
    for (let i = 0; i < 10; i++) {
      requests.push({
        name: 'create a channel',
        run: () => call('POST', '/api/v1/channels/1', { parentId: 1, channelName: `new channel ${i}` }),
      });
    }
    for (const id of doomed) {
      requests.push({
        name: 'delete a channel',
        run: () => call('POST', `/api/v1/channels/1/${id}/actions/delete`),
      });
    }
    for (let i = 0; i < 15; i++) {
      requests.push({
        name: 'check contents',
        run: () =>
          call('POST', '/api/v1/contents/actions/check', {
            siteId: 1,
            contents: others.map((id) => ({ channelId: channel, id })),
          }),
      });
    }
    for (const id of binned) {
      requests.push({
        name: 'restore a content',
        run: () => call('POST', `/api/v1/contents/1/${channel}/${id}/actions/restore`, {}),
      });
    }
    while (requests.length < 200) {
      const id = others[requests.length % others.length] as number;
      requests.push({
        name: 'read',
        run: () =>
          requests.length % 2 === 0
            ? call('GET', `/api/v1/contents/1/${channel}/${id}`)
            : call('POST', '/api/v1/contents', { siteId: 1, channelId: channel, perPage: 1 }),
      });
    }
    expect(requests).toHaveLength(200);

    const answers = await Promise.all(requests.map(async ({ name, run }) => ({ name, answer: await run() })));
    const failed = answers.filter(({ answer }) => answer.status < 200 || answer.status > 299);
    expect(
      failed.map(({ name, answer }) => `${name}: ${answer.status} ${JSON.stringify(answer.body)}`),
    ).toEqual([]);

    // The final state holds every write: 1 + 4 + 10 restored + 40 created contents in the channel.
    const listed = await call('POST', '/api/v1/contents', { siteId: 1, channelId: channel, perPage: 1 });
    expect(listed.status).toBe(200);
    expect((listed.body as { totalCount?: unknown }).totalCount).toBe(55);
    const last = await call('GET', `/api/v1/contents/1/${channel}/${same}`);
    expect(last.status).toBe(200);
    expect(titles.has((last.body as { title?: string }).title ?? '')).toBe(true);
    for (const id of doomed) {
      expect((await call('GET', `/api/v1/channels/1/${id}`)).status).toBe(404);
    }
    const created = answers
      .filter(({ name }) => name === 'create a channel')
      .map(({ answer }) => idOf(answer));
    expect(new Set(created).size).toBe(10);
    for (const id of created) expect((await call('GET', `/api/v1/channels/1/${id}`)).status).toBe(200);
    // No worker logged a 503 or a 500.
    expect(service.output()).not.toMatch(/"msg":"50[03] /);
  });
});
