import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import supertest from 'supertest';
import { DEFAULT_AVATAR_URL } from '../../src/domain/users/avatar.ts';
import { PROBLEM_TYPE_BASE } from '../../src/http/problem.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { startClient, type TypedClient } from '../support/client.ts';

/* The public avatar address of a user, over HTTP into the run's database. */

let app: TestApp;
let http: TypedClient;
let withAvatar: number;
let withoutAvatar: number;

beforeAll(async () => {
  app = await startTestApp();
  http = await startClient(app);
  const account = { passwordHash: 'unused', passwordSalt: 'unused' };
  withAvatar = (
    await app.db.user.create({
      data: { userName: 'lisa', avatarUrl: 'https://cdn.example/avatars/lisa.png', ...account },
    })
  ).id;
  withoutAvatar = (await app.db.user.create({ data: { userName: 'tom', locked: true, ...account } })).id;
});
afterAll(async () => {
  await http.close();
  await app.close();
});

function avatarOf(id: number) {
  return http.client.GET('/api/v1/users/{id}/avatar', { params: { path: { id } } });
}

describe('get user avatar (no credentials needed)', () => {
  test("the user's own avatar address", async () => {
    const { response, data } = await avatarOf(withAvatar);
    expect(response.status).toBe(200);
    expect(data).toEqual({ value: 'https://cdn.example/avatars/lisa.png' });
  });

  test('the default avatar for a user without one (locked or not)', async () => {
    const { data } = await avatarOf(withoutAvatar);
    expect(DEFAULT_AVATAR_URL).toBe('/assets/images/default-avatar.png');
    expect(data).toEqual({ value: DEFAULT_AVATAR_URL });
  });

  test('an unknown id is a 404', async () => {
    const { response, error } = await avatarOf(withoutAvatar + 1000);
    expect(response.status).toBe(404);
    expect(error).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}not-found`,
      status: 404,
      detail: `User ${withoutAvatar + 1000} does not exist`,
    });
  });

  test('an id that is not a positive 32-bit integer is a 400 naming it', async () => {
    for (const id of ['0', '-1', 'abc', '1.5', '2147483648']) {
      const response = await supertest(app.app).get(`/api/v1/users/${id}/avatar`);
      expect(response.status).toBe(400);
      expect(response.body.type).toBe(`${PROBLEM_TYPE_BASE}validation`);
      expect(response.body.errors).toEqual([expect.objectContaining({ path: '/path/id' })]);
    }
  });

  test('a bad API key does not matter: the operation is public', async () => {
    const { response, data } = await http
      .clientAs({ apiKey: 'cms_not-a-key' })
      .GET('/api/v1/users/{id}/avatar', {
        params: { path: { id: withAvatar } },
      });
    expect(response.status).toBe(200);
    expect(data).toEqual({ value: 'https://cdn.example/avatars/lisa.png' });
  });
});
