/**
 * Events benchmark (docs/api/events.md; figures in bench/EVENTS.md), small scale, one process:
 *   1. delivery throughput: N events recorded, then delivered by one DeliveryWorker to a local
 *      receiver that answers 200 at once — events delivered per second, and this process's CPU
 *      time per delivery (worker and receiver; a figure a loaded machine disturbs less);
 *   2. write throughput: content updates over HTTP (keep-alive fetch, C at a time) with no
 *      subscription, then with 3 subscriptions to a receiver that answers after 2 s, the worker
 *      running beside the app as in a serving process — updates per second, and the ratio.
 * Usage: tsx bench/events.ts [--db sqlite|postgresql] [--events N] [--updates N]
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { composeServices } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db/client.ts';
import { applyMigrations } from '../src/db/migrate/index.ts';
import { openPreparation } from '../src/db/preparation.ts';
import { issueApiKey } from '../src/domain/apiKeys/issueApiKey.ts';
import { SYSTEM_ACTOR } from '../src/domain/events/actor.ts';
import { DeliveryWorker } from '../src/domain/events/delivery.ts';
import { OutboundPolicy } from '../src/domain/events/outbound.ts';
import { recordEvent } from '../src/domain/events/record.ts';
import { newWebhookSecret } from '../src/domain/events/secrets.ts';
import { SCOPES } from '../src/domain/principal.ts';
import { seedDemo } from '../src/domain/seed/demo.ts';
import { createApp } from '../src/http/app.ts';
import { createSharedState } from '../src/state/index.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? (args[at + 1] ?? fallback) : fallback;
};
const provider = option('db', 'sqlite');
const EVENTS = Number(option('events', '3000'));
const UPDATES = Number(option('updates', '1500'));
const CONCURRENCY = 10;

function receiver(delayMs: number) {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      setTimeout(() => res.end('ok'), delayMs);
    });
  });
  return {
    server,
    count: () => count,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`),
        ),
      ),
  };
}

/** The migrated database with the settings `npm start` applies before serving (SQLite's WAL mode). */
async function prepare(url: string): Promise<void> {
  await applyMigrations(url);
  const connection = await openPreparation(url);
  await connection.applySettings();
  await connection.close();
}

async function database(name: string) {
  if (provider === 'postgresql') {
    const admin = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    const db = `bench_events_${name}_${process.pid}`;
    await client.query(`DROP DATABASE IF EXISTS ${db}`);
    await client.query(`CREATE DATABASE ${db}`);
    await client.end();
    const url = admin.replace(/\/[^/]*$/, `/${db}`);
    return {
      url,
      drop: async () => {
        const c = new pg.Client({ connectionString: admin });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-events-'));
  return {
    url: `file:${join(dir, 'cms.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function deliveryThroughput(): Promise<{ perSecond: number; cpuMs: number }> {
  const place = await database('delivery');
  await prepare(place.url);
  const handle = await createDb(place.url);
  const { db, provider: kind } = handle;
  const sink = receiver(0);
  const url = await sink.listen();
  await db.webhookSubscription.create({ data: { url, eventTypes: '*', secret: newWebhookSecret() } });
  for (let i = 0; i < EVENTS; i += 50) {
    await db.$transaction(async (tx) => {
      for (let j = i; j < Math.min(i + 50, EVENTS); j += 1)
        await recordEvent(tx, {
          actor: SYSTEM_ACTOR,
          type: 'content.updated',
          resourceId: j,
          siteId: 1,
          channelId: 2,
          payload: { hits: j },
        });
    });
  }
  const worker = new DeliveryWorker({
    db,
    provider: kind,
    policy: new OutboundPolicy(['127.0.0.1']),
    timeoutMs: 10_000,
    owner: 'bench',
    retentionDays: 30,
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  while (sink.count() < EVENTS) if ((await worker.tick()) === 0) break;
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await worker.stop();
  sink.server.close();
  await db.$disconnect();
  await place.drop();
  return { perSecond: sink.count() / seconds, cpuMs: (used.user + used.system) / 1000 / sink.count() };
}

async function updateThroughput(slowSubscriptions: number): Promise<number> {
  const place = await database(`updates${slowSubscriptions}`);
  await prepare(place.url);
  const handle = await createDb(place.url);
  const { db, provider: kind } = handle;
  await seedDemo(handle);
  const targets = await db.content.findMany({ select: { id: true, channelId: true }, take: 40 });
  const { key } = await issueApiKey(db, { title: 'bench', scopes: SCOPES }, SYSTEM_ACTOR);
  const slow = receiver(2000);
  const url = await slow.listen();
  for (let i = 0; i < slowSubscriptions; i += 1)
    await db.webhookSubscription.create({
      data: { url, eventTypes: 'content.*', secret: newWebhookSecret() },
    });
  const config = {
    ...loadConfig({ DATABASE_URL: place.url, NODE_ENV: 'production' }),
    cmsSecret: 'b'.repeat(40),
  };
  const logger = pino({ level: 'silent' });
  const state = createSharedState({ db, redisKeyPrefix: 'bench:', logger });
  const services = await composeServices(config, logger, { db: handle, state });
  const app = createApp(services);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const worker = new DeliveryWorker({
    db,
    provider: kind,
    policy: new OutboundPolicy(['127.0.0.1']),
    timeoutMs: 10_000,
    owner: 'bench',
    retentionDays: 30,
    idleMs: 100,
  });
  worker.start();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < UPDATES) {
        const n = next++;
        const target = targets[n % targets.length] ?? { id: 1, channelId: 1 };
        const response = await fetch(
          `${base}/api/v1/contents/1/${target.channelId}/${target.id}/actions/update`,
          {
            method: 'POST',
            headers: { 'X-SS-API-KEY': key, 'Content-Type': 'application/json' },
            body: JSON.stringify({ hits: n }),
          },
        );
        await response.text();
        if (response.status !== 200) throw new Error(`update answered ${response.status}`);
      }
    }),
  );
  const perSecond = UPDATES / ((performance.now() - started) / 1000);
  await worker.stop();
  await new Promise((resolve) => server.close(resolve));
  slow.server.closeAllConnections();
  slow.server.close();
  await services.close();
  await state.close();
  await db.$disconnect();
  await place.drop();
  return perSecond;
}

const delivered = await deliveryThroughput();
const none = await updateThroughput(0);
const three = await updateThroughput(3);
console.log(
  JSON.stringify(
    {
      db: provider,
      events: EVENTS,
      deliveredPerSecond: Math.round(delivered.perSecond),
      cpuMsPerDelivery: Number(delivered.cpuMs.toFixed(3)),
      updates: UPDATES,
      updatesPerSecondNoWebhook: Math.round(none),
      updatesPerSecondThreeSlowWebhooks: Math.round(three),
      ratio: Number((three / none).toFixed(3)),
    },
    null,
    2,
  ),
);
process.exit(0);
