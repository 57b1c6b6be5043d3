import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { Response } from 'supertest';
import { connectionTurnsOf } from '../../src/db/sqliteTurns.ts';
import { writeTransaction } from '../../src/db/transaction.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';

/*
 * Requests served while another request's write transaction is open on the same client and waiting
 * (src/db/sqliteTurns.ts). On SQLite the worker's client has one connection: a request's plain
 * statement used to run inside the open transaction, so a read answered its uncommitted writes and a
 * single-statement write was undone by its rollback after being answered 201. The transaction here
 * is the one a write request runs (writeTransaction on the app's own client), held open by the test
 * until the other request has either been answered or is waiting for its turn: the order is
 * explicit, no timer decides it. PostgreSQL gives the request another connection: the same test
 * passes there.
 */

let app: TestApp;
let key: string;
beforeAll(async () => {
  ({ app, key } = await startFixtureApp('all', {
    config: { events: { retentionDays: 30, webhookTimeoutMs: 5000, allowedAddresses: ['127.0.0.1'] } },
  }));
}, 60_000);
afterAll(() => app.close());

class RolledBack extends Error {}

/**
 * Sends `request` while a write transaction that changed content 1's title is open, then rolls that
 * transaction back; the request's response.
 */
async function duringRolledBackWrite(request: () => PromiseLike<Response>): Promise<Response> {
  let opened: () => void = () => {};
  const isOpen = new Promise<void>((resolve) => {
    opened = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const transaction = writeTransaction(app.db, async (tx) => {
    await tx.content.update({ where: { id: 1 }, data: { title: 'Uncommitted title' } });
    opened();
    await released;
    throw new RolledBack('the write failed after its first statement');
  }).then(
    () => 'committed',
    (error: unknown) => (error instanceof RolledBack ? 'rolled back' : error),
  );
  await isOpen;
  let answered = false;
  const response = Promise.resolve(request()).finally(() => {
    answered = true;
  });
  const turns = connectionTurnsOf(app.db);
  // Each round lets pending I/O and callbacks run once, until the request was answered or one of its
  // statements waits for the transaction.
  while (!answered && (turns?.waiting ?? 0) === 0) await new Promise((resolve) => setImmediate(resolve));
  release();
  expect(await transaction).toBe('rolled back');
  return response;
}

test("a content read while another request's write transaction is open answers the committed content", async () => {
  const response = await duringRolledBackWrite(() =>
    app.request.get('/api/v1/contents/1/2/1').set('X-SS-API-KEY', key),
  );
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({ id: 1, channelId: 2, title: 'Alpha release notes' });
  const again = await app.request.get('/api/v1/contents/1/2/1').set('X-SS-API-KEY', key);
  expect(again.body).toMatchObject({ id: 1, title: 'Alpha release notes' });
});

test("a write answered while another request's write transaction is open survives that transaction's rollback", async () => {
  const created = await duringRolledBackWrite(() =>
    app.request
      .post('/api/v1/webhooks')
      .set('X-SS-API-KEY', key)
      .send({ url: 'http://127.0.0.1:9/hook', eventTypes: ['content.*'], description: 'acknowledged' }),
  );
  expect(created.status).toBe(201);
  const { id } = (created.body as { webhook: { id: number } }).webhook;
  const read = await app.request.get(`/api/v1/webhooks/${id}`).set('X-SS-API-KEY', key);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id, url: 'http://127.0.0.1:9/hook', description: 'acknowledged' });
});
