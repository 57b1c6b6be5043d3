import { crc32 } from 'node:zlib';
import { $RefParser } from '@apidevtools/json-schema-ref-parser';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pino from 'pino';
import { PNG } from 'pngjs';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { composeServices } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { CONTRACT_FILE } from '../../src/contract.ts';
import { createDb } from '../../src/db/client.ts';
import type { CaptchaOptions } from '../../src/domain/captcha/captcha.ts';
import { generateApiKey } from '../../src/domain/crypto/apiKeys.ts';
import type { Scope } from '../../src/domain/principal.ts';
import { type DemoSecrets, seedDemo } from '../../src/domain/seed/demo.ts';
import { createApp } from '../../src/http/app.ts';
import type { Services } from '../../src/http/services.ts';
import { createCheckCaptcha } from '../../src/operations/captcha/checkCaptcha.ts';
import { createGetCaptcha } from '../../src/operations/captcha/getCaptcha.ts';
import { handlers } from '../../src/operations/registry.ts';
import { startTestApp, TEST_SECRET, type TestApp } from '../support/app.ts';
import { leaks, observeApp } from '../support/leaks.ts';

/*
 * The contract's examples cannot drift from the service: each request example is sent, through
 * HTTP, to a service loaded with the demo site (the same data `npm start` seeds, so a reader can
 * replay the content and channel examples of /docs on a fresh install), and the answer must be the
 * response example of the same name: same status, same shape (every key, every array length) and
 * the same values, except the few a fresh database cannot reproduce (random guids and secrets, the
 * "now" dates of a write, tokens, the ids of events), and the numbers of a few texts (a retry-in number of seconds),
 * matched by the example with its digits wildcarded. A header the response declares (Retry-After)
 * must have its example's value too.
 *
 * A request example is paired with the response example that has its name, whatever the status
 * (the 400 example of components/responses/BadRequest answers the request example `badValue`); a
 * single unnamed `example` pairs with the success answer's. Operations without a request body
 * (get, delete, lists, key reset, template-tag reads with the query given here) are played for
 * their success example; a required query parameter's example is sent too (stl/sqlContents' SQL). The cases run in order as
 * one story on one database (lisa is created before she logs in), so the examples agree with each
 * other too. The captcha's code is random in production: here it is the one the check example
 * answers, read from the contract. The shared problems no request to the demo meets (429, 503,
 * 500) come from services made to meet them, each for real: one with a rate limit of 1 a minute,
 * one whose database does not answer, one whose content read throws.
 */

interface MediaType {
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
}
interface Response {
  content?: Record<string, MediaType>;
  headers?: Record<string, { example?: unknown }>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, MediaType> };
  responses?: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, unknown>>;
}

/**
 * Who answers: the demo, or a service made to fail (each on a database of its own): `limited`
 * allows one request a minute per address, `unreachable` has a database nothing listens to,
 * `failing` reads contents with a handler that throws.
 */
type Service = 'demo' | 'limited' | 'unreachable' | 'failing';

interface Case {
  operationId: string;
  /** The example's name: of the request body example and of the response example it gets. */
  example: string;
  /** The demo when absent. */
  service?: Service;
  path?: Record<string, number | string>;
  /** Query parameters, besides the examples of the required ones (stl/sqlContents' SQL). */
  query?: Record<string, string>;
  /** The answer expected, when it is an error: its example is that status's (unnamed) one. */
  status?: number;
  /** Request headers of the case's own (a stale If-Match). */
  headers?: Record<string, string>;
  /** A body of the test's own, for a problem no request example leads to (a failed login). */
  body?: object;
  /**
   * What is sent: the demo's key (all scopes, default), a key with these scopes only (made on the
   * case's service), none, or the access token the last answer of that login operation carried.
   */
  credentials?: 'none' | Scope[] | { tokenOf: 'loginUser' | 'loginAdministrator' };
  /** The captcha image is fetched first, with the same agent: it keeps the cookie the check reads. */
  captchaImage?: true;
  /** Fields whose value is not reproducible here (checked for type only). */
  volatile?: readonly string[];
  /** A file sent as the one part of a multipart body (an avatar upload), instead of JSON. */
  upload?: Buffer;
  /**
   * Fields and headers whose numbers are not reproducible here (a retry-in number of seconds, a
   * limit set low to be reached): matched by the example with every number wildcarded.
   */
  approximate?: readonly string[];
}

/** The name given here to a media type's single `example`. */
const UNNAMED = 'example';

/** Random in every seeding; the demo fixes everything else. */
const ALWAYS_VOLATILE = ['guid'];
/** Set to "now" by a write. */
const WRITE_DATES = ['lastModifiedDate', 'lastEditDate'];
/** Set to "now" when an account is created, logs in or changes its password. */
const USER_DATES = ['createDate', 'lastResetPasswordDate', 'lastActivityDate'];
const ADMIN_DATES = ['creationDate', 'lastActivityDate'];
/** A fresh signed token and its expiry. */
const TOKEN = ['accessToken', 'expiresAt'];
/** A key's secret (random), its creation date and when it was last used. */
const KEY_FIELDS = ['key', 'createdAt', 'lastUsedAt'];
/** A webhook's signing secret (random) and the "now" dates of its writes. */
const WEBHOOK_FIELDS = ['secret', 'createdAt', 'updatedAt', 'previousSecretUntil'];
/** A queued delivery's event (its id counts every event the story recorded) and its "now" dates. */
const DELIVERY_FIELDS = ['eventId', 'nextAttemptAt', 'createdAt'];

/** The demo's secrets, chosen here so that the login examples (MD5 of Admin2024) can be played. */
const DEMO_SECRETS: DemoSecrets = {
  passwords: { user: 'DemoUser2024', administrator: 'Admin2024' },
  apiKey: generateApiKey(),
};

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** The upload example's avatar: 64×64 of one colour (its re-encoded PNG has 180 bytes). */
function exampleAvatar(): Buffer {
  const png = new PNG({ width: 64, height: 64 });
  for (let i = 0; i < 64 * 64; i++) png.data.set([0x33, 0x66, 0x99, 255], i * 4);
  return PNG.sync.write(png);
}

/** A PNG whose header states 4000×3000 and that holds no pixel: the 422 example. */
function oversizedHeader(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(4000, 0);
  header.writeUInt32BE(3000, 4);
  header.set([8, 6], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('IEND', Buffer.alloc(0))]);
}

/*
 * In order, as one story: the reads of the demo first, then writes, each on a record no later
 * read expects unchanged; accounts and keys are created before they are used.
 */
const CASES: Case[] = [
  { operationId: 'ping', example: UNNAMED },
  { operationId: 'healthz', example: UNNAMED },
  { operationId: 'readyz', example: UNNAMED },
  // The test app runs without a supervisor, as WORKERS=0 does.
  { operationId: 'restartSystem', example: 'unsupervised' },
  // Without Redis, as here, no node caches credentials.
  { operationId: 'clearCache', example: 'database' },
  { operationId: 'listContents', example: 'channelPage' },
  { operationId: 'listContents', example: 'filtered' },
  { operationId: 'listContents', example: 'selected' },
  { operationId: 'listContents', example: 'badValue' },
  { operationId: 'getContent', example: 'content', path: { siteId: 1, channelId: 3, id: 10 } },
  {
    operationId: 'getContent',
    example: 'selected',
    path: { siteId: 1, channelId: 3, id: 10 },
    query: { fields: 'id,title,addDate' },
  },
  { operationId: 'getChannel', example: 'channel', path: { siteId: 1, channelId: 2 } },
  // The root channel's addDate is the seeding's "now".
  { operationId: 'listChannels', example: 'channels', path: { siteId: 1 }, volatile: ['addDate'] },
  // Template-tag reads, before any write.
  { operationId: 'stlListSites', example: 'sites' },
  { operationId: 'stlGetSite', example: 'site', query: { siteDir: 'demo' } },
  { operationId: 'stlGetChannel', example: UNNAMED, query: { siteId: '1', channelIndex: 'news-tech' } },
  {
    operationId: 'stlListContents',
    example: UNNAMED,
    query: {
      siteId: '1',
      channelIndex: 'news',
      scope: 'Descendant',
      order: 'Hits',
      totalNum: '2',
      isRecommend: 'true',
    },
  },
  {
    operationId: 'stlGetContent',
    example: 'content',
    query: { siteId: '1', channelId: '3', contentId: '10' },
  },
  {
    operationId: 'stlGetContent',
    example: 'selected',
    query: { siteId: '1', channelId: '3', contentId: '10', fields: 'id,title,tags' },
  },
  { operationId: 'stlSqlContents', example: UNNAMED },
  { operationId: 'stlSqlContent', example: UNNAMED },
  {
    operationId: 'stlListChannels',
    example: UNNAMED,
    query: { siteId: '1', scope: 'All', order: 'Hits', totalNum: '2' },
  },
  // A view of content 10 (233 hits in the demo), after every read that shows its hits.
  { operationId: 'stlCountHits', example: UNNAMED, credentials: 'none' },
  {
    operationId: 'updateContent',
    example: 'titleAndBody',
    path: { siteId: 1, channelId: 3, id: 11 },
    volatile: WRITE_DATES,
  },
  {
    operationId: 'updateContent',
    example: 'approve',
    path: { siteId: 1, channelId: 3, id: 16 },
    volatile: WRITE_DATES,
  },
  {
    operationId: 'updateChannel',
    example: 'rename',
    path: { siteId: 1, channelId: 4 },
    volatile: WRITE_DATES,
  },
  {
    operationId: 'updateChannel',
    example: 'indexAndGroups',
    path: { siteId: 1, channelId: 6 },
    volatile: WRITE_DATES,
  },
  {
    operationId: 'createChannel',
    example: 'underNews',
    path: { siteId: 1 },
    volatile: [...WRITE_DATES, 'addDate', 'createdDate'],
  },
  {
    operationId: 'deleteChannel',
    example: 'deleted',
    path: { siteId: 1, channelId: 7 },
    volatile: [...WRITE_DATES, 'addDate', 'createdDate'],
  },
  {
    operationId: 'deleteContent',
    example: 'deleted',
    path: { siteId: 1, channelId: 5, id: 28 },
    volatile: WRITE_DATES,
  },
  // The recycle bin holds the content just deleted; it is restored.
  { operationId: 'listRecycledContents', example: 'bin', path: { siteId: 1 } },
  {
    operationId: 'restoreContent',
    example: 'restored',
    path: { siteId: 1, channelId: 5, id: 28 },
    volatile: WRITE_DATES,
  },
  // Two contents added to Tech news (ids 41 and 42: the demo has 40).
  {
    operationId: 'createContent',
    example: 'draft',
    path: { siteId: 1, channelId: 3 },
    volatile: [...WRITE_DATES, 'addDate', 'createdDate'],
  },
  {
    operationId: 'createContent',
    example: 'published',
    path: { siteId: 1, channelId: 3 },
    volatile: [...WRITE_DATES, 'createdDate'],
  },
  // Reviews: two pending contents approved, the draft rejected; the first one's record read back.
  { operationId: 'checkContents', example: 'approve', volatile: ['checkDate'] },
  { operationId: 'checkContents', example: 'reject', volatile: ['checkDate'] },
  {
    operationId: 'listContentChecks',
    example: 'approved',
    path: { siteId: 1, channelId: 4, id: 24 },
    volatile: ['checkDate'],
  },
  // Users: lisa is created, logs in both ways and changes her password; paul only exists.
  { operationId: 'createUser', example: 'full', volatile: USER_DATES },
  { operationId: 'createUser', example: 'minimal', volatile: USER_DATES },
  // An account nobody has: the failed login touches no account the examples show.
  {
    operationId: 'loginUser',
    example: UNNAMED,
    status: 401,
    body: { account: 'nobody', password: '0123456789abcdef0123456789abcdef' },
  },
  { operationId: 'loginUser', example: 'password', volatile: [...USER_DATES, ...TOKEN] },
  { operationId: 'loginUser', example: 'openId', volatile: [...USER_DATES, ...TOKEN] },
  // Before the password change, which would end the token anyway.
  { operationId: 'logoutUser', example: UNNAMED, credentials: { tokenOf: 'loginUser' } },
  { operationId: 'resetUserPassword', example: UNNAMED, volatile: USER_DATES },
  { operationId: 'listUsers', example: UNNAMED, volatile: USER_DATES },
  { operationId: 'getUserAvatar', example: 'own', path: { id: 2 } },
  { operationId: 'getUserAvatar', example: 'default', path: { id: 1 } },
  { operationId: 'getUserAvatar', example: UNNAMED, status: 400, path: { id: 0 } },
  { operationId: 'getUserAvatar', example: UNNAMED, status: 404, path: { id: 12 } },
  // After the address reads: from now on user 2's avatar is the uploaded image.
  {
    operationId: 'uploadUserAvatar',
    example: UNNAMED,
    path: { id: 2 },
    upload: exampleAvatar(),
    volatile: ['updatedAt'],
  },
  {
    operationId: 'uploadUserAvatar',
    example: UNNAMED,
    status: 400,
    path: { id: 2 },
    upload: Buffer.from('<html><script>alert(1)</script></html>'),
  },
  { operationId: 'uploadUserAvatar', example: UNNAMED, status: 415, path: { id: 2 }, body: {} },
  {
    operationId: 'uploadUserAvatar',
    example: UNNAMED,
    status: 422,
    path: { id: 2 },
    upload: oversizedHeader(),
  },
  // paul is read by name, given contact details, then deleted.
  { operationId: 'getUser', example: 'byName', path: { account: 'paul' }, volatile: USER_DATES },
  { operationId: 'updateUser', example: 'contact', path: { id: 3 }, volatile: USER_DATES },
  { operationId: 'deleteUser', example: 'deleted', path: { id: 3 }, volatile: USER_DATES },
  // Administrators: the demo's admin, whose password the test knows (DEMO_SECRETS).
  { operationId: 'loginAdministrator', example: UNNAMED, volatile: [...ADMIN_DATES, ...TOKEN] },
  {
    operationId: 'logoutAdministrator',
    example: UNNAMED,
    credentials: { tokenOf: 'loginAdministrator' },
  },
  { operationId: 'updateAdministrator', example: 'contact', path: { id: 1 }, volatile: ADMIN_DATES },
  { operationId: 'updateAdministrator', example: 'unlock', path: { id: 1 }, volatile: ADMIN_DATES },
  { operationId: 'resetAdministratorPassword', example: UNNAMED, volatile: ADMIN_DATES },
  // An administrator created (id 2: the demo has one), read by name, then deleted.
  { operationId: 'createAdministrator', example: 'editor', volatile: ADMIN_DATES },
  { operationId: 'getAdministrator', example: 'byName', path: { idOrName: 'editor' }, volatile: ADMIN_DATES },
  { operationId: 'deleteAdministrator', example: 'deleted', path: { id: 2 }, volatile: ADMIN_DATES },
  { operationId: 'listAdministrators', example: UNNAMED, volatile: ADMIN_DATES },
  // API keys: two beside the demo's own (id 1).
  { operationId: 'createApiKey', example: 'backEnd', volatile: KEY_FIELDS },
  { operationId: 'createApiKey', example: 'partner', volatile: KEY_FIELDS },
  { operationId: 'updateApiKey', example: 'limit', path: { id: 2 }, volatile: KEY_FIELDS },
  { operationId: 'updateApiKey', example: 'unlimitedForever', path: { id: 3 }, volatile: KEY_FIELDS },
  { operationId: 'listApiKeys', example: UNNAMED, volatile: KEY_FIELDS },
  { operationId: 'resetApiKey', example: UNNAMED, path: { id: 3 }, volatile: KEY_FIELDS },
  { operationId: 'deleteApiKey', example: UNNAMED, path: { id: 2 }, volatile: KEY_FIELDS },
  // Webhooks: a subscription for the demo site, narrowed to one channel, its secret rotated, a test
  // event queued (no delivery worker runs here: it stays pending) and queued again, then deleted.
  { operationId: 'createWebhook', example: 'siteBuild', volatile: WEBHOOK_FIELDS },
  { operationId: 'listWebhooks', example: UNNAMED, volatile: WEBHOOK_FIELDS },
  { operationId: 'getWebhook', example: UNNAMED, path: { id: 1 }, volatile: WEBHOOK_FIELDS },
  { operationId: 'updateWebhook', example: 'techOnly', path: { id: 1 }, volatile: WEBHOOK_FIELDS },
  { operationId: 'rotateWebhookSecret', example: 'hourOverlap', path: { id: 1 }, volatile: WEBHOOK_FIELDS },
  { operationId: 'testWebhook', example: UNNAMED, path: { id: 1 }, volatile: DELIVERY_FIELDS },
  { operationId: 'listWebhookDeliveries', example: UNNAMED, path: { id: 1 }, volatile: DELIVERY_FIELDS },
  {
    operationId: 'redeliverWebhook',
    example: UNNAMED,
    path: { id: 1, deliveryId: 1 },
    volatile: DELIVERY_FIELDS,
  },
  { operationId: 'deleteWebhook', example: UNNAMED, path: { id: 1 }, volatile: WEBHOOK_FIELDS },
  // The activity of one resource: the rename of channel 4 above (an event's id counts the story's).
  {
    operationId: 'listActivity',
    example: UNNAMED,
    query: { resourceType: 'channel', resourceId: '4' },
    volatile: ['id', 'createdAt'],
  },
  // The captcha: the image sets the cookie, the check answers the code it showed.
  { operationId: 'checkCaptcha', example: UNNAMED, path: { name: 'login' }, captchaImage: true },
  // The problems every operation shares, as the content read meets them (last: the key made for
  // the 403 would take an id the key examples expect).
  {
    operationId: 'getContent',
    example: UNNAMED,
    status: 401,
    path: { siteId: 1, channelId: 3, id: 10 },
    credentials: 'none',
  },
  {
    operationId: 'getContent',
    example: UNNAMED,
    status: 403,
    path: { siteId: 1, channelId: 3, id: 10 },
    credentials: ['STL'],
  },
  { operationId: 'getContent', example: UNNAMED, status: 404, path: { siteId: 1, channelId: 3, id: 99 } },
  // A validator no version of the channel has: nothing is written, the current one is named.
  {
    operationId: 'updateChannel',
    example: UNNAMED,
    status: 412,
    path: { siteId: 1, channelId: 3 },
    headers: { 'If-Match': '"v999"' },
    approximate: ['detail', 'message'],
  },
  // The limited service's one request of the minute from this address; the next is refused.
  {
    operationId: 'getContent',
    example: UNNAMED,
    service: 'limited',
    status: 401,
    path: { siteId: 1, channelId: 3, id: 10 },
    credentials: 'none',
  },
  {
    operationId: 'getContent',
    example: UNNAMED,
    service: 'limited',
    status: 429,
    path: { siteId: 1, channelId: 3, id: 10 },
    credentials: 'none',
    approximate: ['detail', 'message', 'Retry-After'],
  },
  // The demo's key cannot even be looked up.
  {
    operationId: 'getContent',
    example: UNNAMED,
    service: 'unreachable',
    status: 503,
    path: { siteId: 1, channelId: 3, id: 10 },
  },
  {
    operationId: 'getContent',
    example: UNNAMED,
    service: 'failing',
    status: 500,
    path: { siteId: 1, channelId: 3, id: 10 },
    credentials: ['Contents'],
  },
];

/**
 * Request examples not played here, each with why (none today). Listed, so that a new request
 * example fails until it is played or listed.
 */
const NOT_YET_PLAYED = new Set<string>([]);

interface Located {
  method: string;
  path: string;
  operation: Operation;
}

interface Answering {
  request: TestAgent;
  /** Stores a key with these scopes in the service's database (none for `unreachable`). */
  createApiKey?: (scopes: Scope[]) => Promise<string>;
}

let document: Document;
const operations = new Map<string, Located>();
let app: TestApp;
let apiKey: string;
let limited: TestApp;
let failing: TestApp;
let services: Record<Service, Answering>;
/** The last answer of each operation: the logouts present the token their login answered. */
const answers = new Map<string, unknown>();

// Nothing listens on port 1: connections are refused at once (as in test/http/problems.test.ts).
const UNREACHABLE = 'postgresql://cms:secret@127.0.0.1:1/cms';
const unreachable = await createDb(UNREACHABLE);
let unreachableServices: Services;

beforeAll(async () => {
  document = (await $RefParser.dereference(CONTRACT_FILE)) as unknown as Document;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, value] of Object.entries(item)) {
      const operation = value as Partial<Operation>;
      if (typeof operation?.operationId === 'string') {
        operations.set(operation.operationId, { method, path, operation: operation as Operation });
      }
    }
  }
  // The code the check example answers is the one every image of the demo shows.
  const { captcha } = requestExample(located('checkCaptcha').operation, UNNAMED) as { captcha: string };
  leaks.secret(captcha, 'captcha code drawn', 'word');
  const captchaOptions: CaptchaOptions = { newCode: () => captcha };
  app = await startTestApp({
    handlers: {
      ...handlers,
      getCaptcha: createGetCaptcha(captchaOptions),
      checkCaptcha: createCheckCaptcha(captchaOptions),
    },
  });
  ({ apiKey } = await seedDemo(app, DEMO_SECRETS));
  limited = await startTestApp({ config: { rateLimitPerMinute: 1 } });
  failing = await startTestApp({
    handlers: {
      ...handlers,
      getContent: async () => {
        throw new Error('the content read failed');
      },
    },
  });
  // Built as the support builds a test app, without a database it could create.
  const logger = pino({ level: 'trace' }, leaks.logDestination());
  unreachableServices = await composeServices(
    {
      ...loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: UNREACHABLE }),
      cmsSecret: TEST_SECRET,
      redisKeyPrefix: 'cms-test:',
    },
    logger,
    { db: unreachable },
  );
  const down = createApp(unreachableServices);
  observeApp(down);
  services = {
    demo: app,
    limited,
    failing,
    unreachable: { request: supertest.agent(down) },
  };
});
afterAll(async () => {
  await Promise.all([app.close(), limited.close(), failing.close(), unreachableServices.close()]);
  await unreachable.db.$disconnect();
});

function located(operationId: string): Located {
  const found = operations.get(operationId);
  if (found === undefined) throw new Error(`no operation ${operationId}`);
  return found;
}

function jsonExamples(media: MediaType | undefined): Map<string, unknown> {
  const found = new Map<string, unknown>();
  if (media?.example !== undefined) found.set(UNNAMED, media.example);
  for (const [name, example] of Object.entries(media?.examples ?? {})) found.set(name, example.value);
  return found;
}

function requestExample(operation: Operation, name: string): unknown {
  return jsonExamples(operation.requestBody?.content?.['application/json']).get(name);
}

/**
 * The response example of that name. An unnamed `example` (read as 'example') pairs only with the
 * success answer: every error response has one of its own.
 */
function responseExample(operation: Operation, name: string, wanted?: number): Expected {
  const responses = operation.responses ?? {};
  // A status the operation does not list is its `default` response's (500: UnexpectedError).
  const listed = wanted === undefined || String(wanted) in responses ? String(wanted) : 'default';
  const found: Expected[] = [];
  for (const [status, response] of Object.entries(responses)) {
    if (wanted === undefined ? name === UNNAMED && !/^2\d\d$/.test(status) : status !== listed) continue;
    for (const media of Object.values(response.content ?? {})) {
      const examples = jsonExamples(media);
      if (examples.has(name)) {
        found.push({
          status: wanted ?? Number(status),
          value: examples.get(name),
          headers: Object.fromEntries(
            Object.entries(response.headers ?? {})
              .filter(([, header]) => header.example !== undefined)
              .map(([header, { example }]) => [header, String(example)]),
          ),
        });
      }
    }
  }
  if (found.length !== 1) {
    throw new Error(`${operation.operationId}: ${found.length} response examples named '${name}'`);
  }
  return found[0] as Expected;
}

interface Expected {
  status: number;
  value: unknown;
  /** The example of each header the response declares with one, by its name in the contract. */
  headers: Record<string, string>;
}

/** The example with each number wildcarded: `retry in 30 s` matches `retry in 57 s`. */
function numbersWildcarded(example: string): RegExp {
  const escaped = example.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\d+/g, '\\d+')}$`);
}

/**
 * The example as a matcher: volatile fields only need a value of the same type, approximate ones
 * the example's text with other numbers.
 */
function matcherOf(value: unknown, volatile: ReadonlySet<string>, approximate: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => matcherOf(item, volatile, approximate));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      typeof field === 'string' && volatile.has(key)
        ? expect.any(String)
        : typeof field === 'number' && volatile.has(key)
          ? expect.any(Number)
          : typeof field === 'string' && approximate.has(key)
            ? expect.stringMatching(numbersWildcarded(field))
            : matcherOf(field, volatile, approximate),
    ]),
  );
}

/** The example of every required query parameter that has one (stl/sqlContents' SQL). */
function requiredParameterExamples(operation: Operation): Record<string, string> {
  return Object.fromEntries(
    (operation.parameters ?? [])
      .filter(
        (parameter) => parameter.in === 'query' && parameter.required && parameter.example !== undefined,
      )
      .map((parameter) => [parameter.name, String(parameter.example)]),
  );
}

async function presentCredentials(request: supertest.Test, c: Case, service: Answering): Promise<void> {
  const { credentials } = c;
  if (credentials === 'none') return;
  if (credentials === undefined) {
    request.set('X-SS-API-KEY', apiKey);
    return;
  }
  if (Array.isArray(credentials)) {
    if (service.createApiKey === undefined) throw new Error(`no key can be made for ${c.operationId}`);
    request.set('X-SS-API-KEY', await service.createApiKey(credentials));
    return;
  }
  const answer = answers.get(credentials.tokenOf) as { accessToken?: unknown } | undefined;
  if (typeof answer?.accessToken !== 'string') throw new Error(`${credentials.tokenOf} answered no token`);
  request.set('Authorization', `Bearer ${answer.accessToken}`);
}

function pathOf(template: string, values: Record<string, number | string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name}`);
    return String(value);
  });
}

test('every request example of the contract is played here or listed as not yet played', () => {
  const all: string[] = [];
  for (const { operation } of operations.values()) {
    for (const name of jsonExamples(operation.requestBody?.content?.['application/json']).keys()) {
      all.push(`${operation.operationId}/${name}`);
    }
  }
  const played = CASES.filter(
    (c) => c.body === undefined && requestExample(located(c.operationId).operation, c.example) !== undefined,
  );
  expect(all.filter((name) => !NOT_YET_PLAYED.has(name)).sort()).toEqual(
    played.map((c) => `${c.operationId}/${c.example}`).sort(),
  );
  // No stale entry in the list of the unplayed.
  expect(all).toEqual(expect.arrayContaining([...NOT_YET_PLAYED]));
});

describe('each example, sent to the demo, gets the response example of its name', () => {
  for (const c of CASES) {
    const name = `${c.operationId} ${c.example}${c.status === undefined ? '' : ` (${c.status})`}`;
    test(`${name}${c.service === undefined ? '' : `, from the ${c.service} service`}`, async () => {
      const { method, path, operation } = located(c.operationId);
      const service = services[c.service ?? 'demo'];
      const body = c.body ?? requestExample(operation, c.example);
      const query = { ...requiredParameterExamples(operation), ...c.query };
      const url = pathOf(path, c.path) + (Object.keys(query).length ? `?${new URLSearchParams(query)}` : '');
      if (c.captchaImage) {
        const image = await service.request.get(pathOf(located('getCaptcha').path, c.path));
        expect({ status: image.status, type: image.type }).toEqual({ status: 200, type: 'image/png' });
      }
      const request =
        method === 'get'
          ? service.request.get(url)
          : c.upload !== undefined
            ? service.request.post(url).attach('file', c.upload, 'avatar.png')
            : service.request.post(url).type('application/json');
      await presentCredentials(request, c, service);
      for (const [header, value] of Object.entries(c.headers ?? {})) request.set(header, value);
      const response = await (body === undefined ? request : request.send(body as object));
      answers.set(c.operationId, response.body);
      const expected = responseExample(operation, c.example, c.status);
      const volatile = new Set([...ALWAYS_VOLATILE, ...(c.volatile ?? [])]);
      const approximate = new Set(c.approximate);
      // ping answers text/plain; everything else JSON.
      const received = response.type.startsWith('text/') ? response.text : response.body;
      expect({
        status: response.status,
        body: received,
        headers: Object.fromEntries(
          Object.keys(expected.headers).map((header) => [header, response.headers[header.toLowerCase()]]),
        ),
      }).toEqual({
        status: expected.status,
        body: matcherOf(expected.value, volatile, approximate),
        headers: matcherOf(expected.headers, new Set(), approximate),
      });
    });
  }
});
