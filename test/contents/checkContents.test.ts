import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { CmsClient, components } from '../../client/src/index.ts';
import type { TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';
import { SITE_LEVEL, startFixtureApp } from '../support/fixtures.ts';
import { accessTokenOf, expectRefusedBodies } from '../support/requests.ts';

let app: TestApp;
let key: string;
let keyId: number;
let typed: TypedClient;

beforeAll(async () => {
  ({ app, key } = await startFixtureApp(['Contents']));
  typed = await startClient(app, key);
  keyId = (await app.db.apiKey.findFirstOrThrow({ orderBy: { id: 'desc' } })).id;
});
afterAll(async () => {
  await typed.close();
  await app.close();
});

type CheckContentsRequest = components['schemas']['CheckContentsRequest'];

const check = (body: CheckContentsRequest, client: CmsClient = typed.client) =>
  client.POST('/api/v1/contents/actions/check', { body });
const checksOf = (siteId: number, channelId: number, id: number, client: CmsClient = typed.client) =>
  client.GET('/api/v1/contents/{siteId}/{channelId}/{id}/checks', {
    params: { path: { siteId, channelId, id } },
  });
const levelsOf = async (ids: number[]) =>
  (await app.db.content.findMany({ where: { id: { in: ids } }, orderBy: { id: 'asc' } })).map((row) => [
    row.checkedLevel,
    row.checked,
  ]);
const approvedTotal = async () =>
  (await typed.client.POST('/api/v1/contents', { body: { siteId: 1, checked: true } })).data?.totalCount;

/** New contents of channel 3 at these levels (the site approves at level 2). */
async function contentsAt(levels: number[]): Promise<number[]> {
  const ids: number[] = [];
  for (const checkedLevel of levels) {
    const { data } = await typed.client.POST('/api/v1/contents/{siteId}/{channelId}', {
      params: { path: { siteId: 1, channelId: 3 } },
      body: { title: `At level ${checkedLevel}`, checkedLevel: checkedLevel as 0 },
    });
    ids.push(data?.id as number);
  }
  return ids;
}

const inChannel3 = (ids: number[]) => ids.map((id) => ({ channelId: 3, id }));

describe('POST /api/v1/contents/actions/check', () => {
  test("approval: to the site's last stage by default, recorded per content in the order asked", async () => {
    const ids = await contentsAt([0, 1, -99, -1]);
    const before = await approvedTotal();
    const asked = [ids[2], ids[0], ids[1], ids[3]] as number[];
    const { data, response } = await check({ siteId: 1, contents: inChannel3(asked), reasons: 'Looks good' });
    expect(response.status).toBe(200);
    expect(data?.value.map((record) => record.contentId)).toEqual(asked);
    for (const record of data?.value ?? []) {
      expect(record).toMatchObject({
        siteId: 1,
        channelId: 3,
        adminId: 0,
        apiKeyId: keyId,
        checked: true,
        checkedLevel: SITE_LEVEL,
        reasons: 'Looks good',
      });
      expect(record.checkDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
    expect(await levelsOf(ids)).toEqual(ids.map(() => [SITE_LEVEL, true]));
    // The list's totals follow at once.
    expect(await approvedTotal()).toBe((before ?? 0) + 4);
  });

  test('approval to a stage: a content past it keeps its level', async () => {
    const ids = await contentsAt([0, 2, -2]);
    const { data } = await check({ siteId: 1, contents: inChannel3(ids), checkedLevel: 1 });
    expect(data?.value.map((record) => record.checkedLevel)).toEqual([1, 2, 1]);
    expect(await levelsOf(ids)).toEqual([
      [1, false],
      [2, true],
      [1, false],
    ]);
  });

  test('rejection: at the stage each content was waiting for', async () => {
    const ids = await contentsAt([0, 1, 2, -99, -2]);
    const before = await approvedTotal();
    const { data, response } = await check({
      siteId: 1,
      contents: inChannel3(ids),
      checked: false,
      reasons: 'Sources missing',
    });
    expect(response.status).toBe(200);
    expect(data?.value.map((record) => [record.checked, record.checkedLevel])).toEqual([
      [false, -1],
      [false, -2],
      [false, -2],
      [false, -1],
      [false, -2],
    ]);
    expect(await levelsOf(ids)).toEqual([
      [-1, false],
      [-2, false],
      [-2, false],
      [-1, false],
      [-2, false],
    ]);
    expect(await approvedTotal()).toBe((before ?? 0) - 1);
  });

  test("the records are read back newest first, with an administrator's id", async () => {
    const [id] = (await contentsAt([0])) as [number];
    expect((await checksOf(1, 3, id)).data).toEqual({ value: [] });
    await check({ siteId: 1, contents: inChannel3([id]), checkedLevel: 1, reasons: 'first stage' });
    const admin = await app.db.administrator.create({
      data: { userName: 'reviewer', passwordHash: 'x', passwordSalt: 'x' },
    });
    const asAdmin = typed.clientAs({
      bearerToken: accessTokenOf(app, 'administrator', admin.id, ['Contents']),
    });
    const second = await check({ siteId: 1, contents: inChannel3([id]), reasons: 'final' }, asAdmin);
    expect(second.data?.value[0]).toMatchObject({ adminId: admin.id, apiKeyId: 0, checkedLevel: 2 });
    const { data, response } = await checksOf(1, 3, id);
    expect(response.status).toBe(200);
    expect(data?.value.map((record) => [record.reasons, record.checkedLevel, record.adminId])).toEqual([
      ['final', 2, admin.id],
      ['first stage', 1, 0],
    ]);
  });

  test('all or nothing: one content that cannot be checked (404) leaves every other as it was', async () => {
    const ids = await contentsAt([0, 0]);
    const records = await app.db.contentCheck.count();
    for (const bad of [
      { channelId: 3, id: 999 },
      { channelId: 2, id: 3 },
      { channelId: 2, id: 8 },
      { channelId: 11, id: 20 },
    ]) {
      const { response, error } = await check({ siteId: 1, contents: [...inChannel3(ids), bad] });
      expect(response.status).toBe(404);
      expect(error).toMatchObject({
        type: 'https://cms.example/problems/not-found',
        detail: `Content ${bad.id} does not exist in channel ${bad.channelId} of site 1`,
      });
    }
    expect(await levelsOf(ids)).toEqual([
      [0, false],
      [0, false],
    ]);
    expect(await app.db.contentCheck.count()).toBe(records);
    const missingSite = await check({ siteId: 999, contents: inChannel3(ids) });
    expect(missingSite.response.status).toBe(404);
  });

  test('400: a content twice, a level above the site, a level with a rejection, bad shapes', async () => {
    const ids = await contentsAt([0]);
    const cases: [unknown, string][] = [
      [{ siteId: 1, contents: inChannel3([ids[0] as number, ids[0] as number]) }, '/body/contents/1'],
      [{ siteId: 1, contents: inChannel3(ids), checkedLevel: 3 }, '/body/checkedLevel'],
      [{ siteId: 1, contents: inChannel3(ids), checkedLevel: 6 }, '/body/checkedLevel'],
      [{ siteId: 1, contents: inChannel3(ids), checked: false, checkedLevel: 1 }, '/body/checkedLevel'],
      [{ siteId: 1, contents: [] }, '/body/contents'],
      [
        { siteId: 1, contents: Array.from({ length: 1001 }, (_, i) => ({ channelId: 3, id: i + 1 })) },
        '/body/contents',
      ],
      [{ siteId: 1, contents: [{ channelId: 3 }] }, '/body/contents/0/id'],
      [{ contents: inChannel3(ids) }, '/body/siteId'],
      [{ siteId: 1, contents: inChannel3(ids), approve: true }, '/body/approve'],
      [{ siteId: 1, contents: inChannel3(ids), reasons: 'x'.repeat(2001) }, '/body/reasons'],
    ];
    await expectRefusedBodies(app, key, '/api/v1/contents/actions/check', cases);
    expect(await levelsOf(ids)).toEqual([[0, false]]);
  });

  test("401 without credentials, 403 without the Contents scope or with a user's token", async () => {
    const ids = await contentsAt([0]);
    const body = { siteId: 1, contents: inChannel3(ids) };
    expect((await check(body, typed.clientAs({}))).response.status).toBe(401);
    const other = typed.clientAs({ apiKey: await app.createApiKey(['Channels', 'STL']) });
    expect((await check(body, other)).response.status).toBe(403);
    const user = await app.db.user.create({
      data: { userName: 'member', passwordHash: 'x', passwordSalt: 'x' },
    });
    const asUser = typed.clientAs({ bearerToken: accessTokenOf(app, 'user', user.id, ['Contents']) });
    const refused = await check(body, asUser);
    expect(refused.response.status).toBe(403);
    expect(
      (
        await asUser.POST('/api/v1/contents/{siteId}/{channelId}', {
          params: { path: { siteId: 1, channelId: 3 } },
          body: { title: 'By a member' },
        })
      ).response.status,
    ).toBe(403);
    expect(await levelsOf(ids)).toEqual([[0, false]]);
    expect((await checksOf(1, 3, ids[0] as number, typed.clientAs({}))).response.status).toBe(401);
    expect((await checksOf(1, 3, ids[0] as number, other)).response.status).toBe(403);
  });
});

describe('GET /api/v1/contents/{siteId}/{channelId}/{id}/checks', () => {
  test('404 as for get content: missing, in another channel, recycled', async () => {
    for (const [siteId, channelId, id] of [
      [1, 3, 999],
      [1, 2, 3],
      [1, 2, 8],
      [999, 3, 3],
    ] as const) {
      const { response, error } = await checksOf(siteId, channelId, id);
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ type: 'https://cms.example/problems/not-found' });
    }
  });
});
