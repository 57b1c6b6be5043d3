import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient } from '../../client/src/index.ts';
import { importDocument } from '../../src/domain/import/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { startFixtureApp } from '../support/fixtures.ts';

let app: TestApp;
let key: string;
let typed: TypedClient;

/** Site 20: a generated tree of this many channels, siblings in a shuffled taxis order. */
const GENERATED = 400;
const generated: { id: number; parentId: number; taxis: number }[] = [];
/** Site 30: a chain 200 channels deep, with 300 siblings (ties of taxis) under its last channel. */
const DEEP = 200;
const WIDE = 300;
const deepAndWide: { id: number; parentId: number; taxis: number }[] = [];

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Channels', 'STL']));
  typed = await startClient(app, key);
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  // The root channel has the site's id.
  generated.push({ id: 20, parentId: 0, taxis: 0 });
  for (let i = 1; i < GENERATED; i++) {
    const parent = generated[Math.floor(random() * generated.length)] as (typeof generated)[number];
    // Few distinct taxis values, so that ties fall back to the id.
    generated.push({ id: 1000 + i, parentId: parent.id, taxis: Math.floor(random() * 5) });
  }
  deepAndWide.push({ id: 30, parentId: 0, taxis: 0 });
  for (let i = 1; i < DEEP; i++)
    deepAndWide.push({ id: 5000 + i, parentId: deepAndWide[i - 1]!.id, taxis: i });
  const last = deepAndWide[DEEP - 1]!.id;
  // Ids given in descending order, taxis in three values: the order comes from taxis, then id.
  for (let i = 0; i < WIDE; i++) deepAndWide.push({ id: 9000 - i, parentId: last, taxis: i % 3 });
  await importDocument(app, {
    sites: [
      { id: 20, siteDir: 'generated', siteName: 'Generated' },
      { id: 30, siteDir: 'deep', siteName: 'Deep' },
    ],
    channels: [
      ...generated.map((channel) => ({ ...channel, siteId: 20, channelName: `Channel ${channel.id}` })),
      ...deepAndWide.map((channel) => ({ ...channel, siteId: 30, channelName: `Deep ${channel.id}` })),
    ],
    // Approved (level 1 of 1) and pending contents: contentNum counts the approved ones.
    contents: [5001, 5001, 5002, 9000, 8999, 8999].map((channelId, i) => ({
      siteId: 30,
      channelId,
      title: `Deep content ${i}`,
      checkedLevel: i === 1 ? 0 : 1,
    })),
  });
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

const list = (siteId: number, client: CmsClient = typed.client) =>
  client.GET('/api/v1/channels/{siteId}', { params: { path: { siteId } } });

describe('GET /api/v1/channels/{siteId}', () => {
  test('the fixture site in tree order, with its tree fields and approved contents', async () => {
    const { data, response } = await list(1);
    expect(response.status).toBe(200);
    expect(
      data?.value.map((channel) => [
        channel.id,
        channel.parentId,
        channel.parentsPath,
        channel.parentsCount,
        channel.childrenCount,
        channel.isLastNode,
        channel.contentNum,
      ]),
    ).toEqual([
      [1, 0, '', 0, 2, true, 0],
      [4, 1, '1', 1, 0, false, 1],
      [2, 1, '1', 1, 1, true, 2],
      [3, 2, '1,2', 2, 0, true, 0],
    ]);
  });

  test('each item is what the channel template tag answers for that channel', async () => {
    const { data } = await list(1);
    for (const channel of data?.value ?? []) {
      const one = await typed.client.GET('/api/v1/stl/channel', {
        params: { query: { siteId: 1, channelId: channel.id } },
      });
      expect(one.data?.value).toEqual(channel);
    }
  });

  test('a larger tree: depth first, siblings by taxis then id, every channel once', async () => {
    const childrenOf = new Map<number, typeof generated>();
    for (const channel of generated.slice(1)) {
      childrenOf.set(channel.parentId, [...(childrenOf.get(channel.parentId) ?? []), channel]);
    }
    const expected: number[] = [];
    const visit = (id: number) => {
      expected.push(id);
      const children = [...(childrenOf.get(id) ?? [])].sort((a, b) => a.taxis - b.taxis || a.id - b.id);
      for (const child of children) visit(child.id);
    };
    visit(20);
    const { data } = await list(20);
    expect(data?.value.map((channel) => channel.id)).toEqual(expected);
    expect(expected).toHaveLength(GENERATED);
    for (const channel of data?.value ?? []) {
      expect(channel.childrenCount).toBe(childrenOf.get(channel.id)?.length ?? 0);
    }
  });

  test('a deep and wide tree: exact order, levels, paths, children, last siblings and contents', async () => {
    const chain = deepAndWide.slice(0, DEEP);
    const fan = deepAndWide.slice(DEEP).sort((a, b) => a.taxis - b.taxis || a.id - b.id);
    const { data } = await list(30);
    const rows = data?.value ?? [];
    expect(rows.map((channel) => channel.id)).toEqual([...chain, ...fan].map((channel) => channel.id));
    const pathOf = (depth: number) =>
      chain
        .slice(0, depth)
        .map((channel) => channel.id)
        .join(',');
    const approved: Record<number, number> = { 5001: 1, 5002: 1, 9000: 1, 8999: 2 };
    expect(
      rows.map((channel) => [
        channel.parentsCount,
        channel.parentsPath,
        channel.childrenCount,
        channel.isLastNode,
        channel.contentNum,
      ]),
    ).toEqual([
      ...chain.map((channel, depth) => [
        depth,
        pathOf(depth),
        depth === DEEP - 1 ? WIDE : 1,
        true,
        approved[channel.id] ?? 0,
      ]),
      ...fan.map((channel, index) => [DEEP, pathOf(DEEP), 0, index === WIDE - 1, approved[channel.id] ?? 0]),
    ]);
  });

  test('a channel added or moved shows at once', async () => {
    await app.db.channel.update({ where: { id: 4 }, data: { taxis: 5 } });
    const { data } = await list(1);
    expect(data?.value.map((channel) => [channel.id, channel.isLastNode])).toEqual([
      [1, true],
      [2, false],
      [3, true],
      [4, true],
    ]);
  });

  test('400, 401, 403 and 404', async () => {
    const invalid = await app.request.get('/api/v1/channels/0').set('X-SS-API-KEY', key);
    expect(invalid.status).toBe(400);
    expect(invalid.type).toBe('application/problem+json');
    expect((await list(1, typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Contents']) });
    expect((await list(1, other)).response.status).toBe(403);
    const { response, error } = await list(999);
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ type: 'https://cms.example/problems/not-found' });
  });
});
