import { randomBytes } from 'node:crypto';
import type { DbHandle } from '../../db/client.ts';
import { withMigrationLock } from '../../db/migrate/lock.ts';
import { passwordProblem } from '../accounts/rules.ts';
import { generateApiKey } from '../crypto/apiKeys.ts';
import { formatDateTime } from '../dates.ts';
import { importDocument } from '../import/index.ts';
import { SCOPES } from '../principal.ts';

/*
 * A small, realistic catalogue to try the service with: one root site, a two-level channel tree,
 * forty contents in every review state, one user and one administrator. Everything but the guids,
 * the passwords and the API key is the same on every run (dates included), so examples in the
 * documentation stay true: test/contract checks the contract's examples against this demo. The passwords and the key are random and shown once to whoever seeded: published ones would
 * let anyone sign in (and so reach every scope) on any system that kept the demo.
 *
 *   1 Demo site ─┬─ 2 News (news) ─┬─ 3 Tech news (news-tech)
 *                │                 └─ 4 Company news (news-company)
 *                └─ 5 Products (products) ── 6 Software (products-software)
 */

export const DEMO_SITE_ID = 1;

/** User names of the demo accounts; their passwords are generated at each seeding. */
export const DEMO_USER_NAMES = { user: 'demo-user', administrator: 'admin' } as const;

export interface DemoSecrets {
  passwords: { user: string; administrator: string };
  /** All scopes, never expires. */
  apiKey: string;
}

/**
 * 96 random bits, written in letters, digits, - and _, drawn again until the password rule holds
 * (one draw in fifteen has no digit).
 */
function randomPassword(): string {
  for (;;) {
    const password = randomBytes(12).toString('base64url');
    if (passwordProblem(password) === undefined) return password;
  }
}

export function generateDemoSecrets(): DemoSecrets {
  return {
    passwords: { user: randomPassword(), administrator: randomPassword() },
    apiKey: generateApiKey(),
  };
}

export const DEMO_API_KEY_TITLE = 'Demo key';

interface DemoChannel {
  id: number;
  parentId: number;
  channelName: string;
  indexName: string;
  tags: string[];
  titles: string[];
}

const CHANNELS: DemoChannel[] = [
  {
    id: 2,
    parentId: 1,
    channelName: 'News',
    indexName: 'news',
    tags: ['announcement'],
    titles: [
      'Welcome to the demo site',
      'Spring release schedule announced',
      'Community meetup in Berlin',
      'How we test every release',
      'Year in review',
      'Accessibility improvements rolled out',
      'New documentation portal',
      'Maintenance window this weekend',
    ],
  },
  {
    id: 3,
    parentId: 2,
    channelName: 'Tech news',
    indexName: 'news-tech',
    tags: ['tech', 'engineering'],
    titles: [
      'Upgrading to PostgreSQL 15',
      'Caching strategies for a headless CMS',
      'Introducing the content query API',
      'Full-text search deep dive',
      'Scaling API nodes behind a load balancer',
      'Keeping API keys safe',
      'Moving from SQLite to PostgreSQL',
      'Rate limiting explained',
    ],
  },
  {
    id: 4,
    parentId: 2,
    channelName: 'Company news',
    indexName: 'news-company',
    tags: ['company'],
    titles: [
      'We are hiring backend engineers',
      'Quarterly results',
      'New office opens in Lisbon',
      'Partnership with Acme Corp',
      'Customer story: City Library',
      'Sustainability report',
      'Meet the support team',
      'Holiday opening hours',
    ],
  },
  {
    id: 5,
    parentId: 1,
    channelName: 'Products',
    indexName: 'products',
    tags: ['product'],
    titles: [
      'Product overview',
      'Pricing plans',
      'Enterprise edition',
      'Hosted service',
      'Feature comparison',
      'Roadmap',
      'Support plans',
      'Frequently asked questions',
    ],
  },
  {
    id: 6,
    parentId: 5,
    channelName: 'Software',
    indexName: 'products-software',
    tags: ['product', 'software'],
    titles: [
      'Desktop editor 2.0',
      'Mobile app for editors',
      'Command-line tools',
      'Import and export toolkit',
      'Plugin SDK',
      'Theme starter kit',
      'Analytics add-on',
      'Backup utility',
    ],
  },
];

const AUTHORS = ['Ann Lee', 'Bob Stone', 'Cy Park', 'Dee Moss'];
const PENDING = new Set([7, 15, 23, 31]);
const DRAFT = 38;
const REJECTED = 39;

function checkedLevelOf(n: number): number {
  if (n === DRAFT) return -99;
  if (n === REJECTED) return -1;
  return PENDING.has(n) ? 0 : 1;
}

/**
 * Dates the import would otherwise set to "now": fixed, so that a record read from the demo is the
 * same on every system (the contract's examples, replayed by test/contract, and the README's use it).
 */
function sameDates<K extends string>(names: readonly K[], date: string): Record<K, string> {
  return Object.fromEntries(names.map((name) => [name, date])) as Record<K, string>;
}

/** When the demo's channels were created. */
const CHANNELS_DATE = '2024-01-02 09:00:00';

function demoContents() {
  return CHANNELS.flatMap((channel, c) =>
    channel.titles.map((title, i) => {
      const n = c * channel.titles.length + i;
      const hits = (n * 137) % 1000;
      return {
        id: n + 1,
        siteId: DEMO_SITE_ID,
        channelId: channel.id,
        title,
        subTitle: i % 4 === 1 ? `${channel.channelName}, part ${i}` : '',
        summary: `${title}: a short summary for lists and previews.`,
        body: `<p>${title}.</p><p>This demo article belongs to ${channel.channelName} and is written by ${AUTHORS[n % AUTHORS.length]}.</p>`,
        author: AUTHORS[n % AUTHORS.length],
        source: i % 2 === 0 ? 'Demo newsroom' : '',
        taxis: i + 1,
        hits,
        downloads: Math.floor(hits / 10),
        top: i === 0,
        recommend: i % 3 === 1,
        hot: hits >= 700,
        color: i % 5 === 2,
        groupNames: [...(i === 0 ? ['featured'] : []), ...(i % 4 === 0 ? ['home'] : [])],
        tagNames: i % 2 === 0 ? channel.tags : channel.tags.slice(0, 1),
        checkedLevel: checkedLevelOf(n),
        addUserName: DEMO_USER_NAMES.administrator,
        ...sameDates(
          ['addDate', 'createdDate', 'lastModifiedDate', 'lastEditDate'],
          formatDateTime(new Date(2024, 0, 5 + n * 3, 9 + (n % 8), (n * 7) % 60, 0)),
        ),
      };
    }),
  );
}

/** The demo as an import document: the catalogue, both accounts and the key, written all at once. */
export function demoDocument(secrets: DemoSecrets) {
  return {
    sites: [
      {
        id: DEMO_SITE_ID,
        siteDir: 'demo',
        siteName: 'Demo site',
        isRoot: true,
        attributes: { pageSize: 20, isCountHits: true },
      },
    ],
    channels: CHANNELS.map(({ id, parentId, channelName, indexName }, i) => ({
      id,
      siteId: DEMO_SITE_ID,
      parentId,
      channelName,
      indexName,
      taxis: i + 1,
      description: `${channelName} of the demo site`,
      ...sameDates(['addDate', 'createdDate', 'lastModifiedDate'], CHANNELS_DATE),
    })),
    contents: demoContents(),
    users: [
      {
        userName: DEMO_USER_NAMES.user,
        password: secrets.passwords.user,
        displayName: 'Demo User',
        email: 'demo-user@example.com',
        mobile: '15500000001',
      },
    ],
    administrators: [
      {
        userName: DEMO_USER_NAMES.administrator,
        password: secrets.passwords.administrator,
        displayName: 'Administrator',
        email: 'admin@example.com',
        siteId: DEMO_SITE_ID,
        siteIdCollection: String(DEMO_SITE_ID),
      },
    ],
    apiKeys: [{ title: DEMO_API_KEY_TITLE, key: secrets.apiKey, scopes: [...SCOPES] }],
  };
}

/**
 * Loads the demo catalogue, both accounts and an all-scopes API key in one transaction (the import's):
 * a failure anywhere leaves the database as it was. Returns the secrets, which are stored only as
 * hashes and digests and must be shown to the operator now.
 */
export async function seedDemo(
  database: Pick<DbHandle, 'db' | 'provider'>,
  secrets: DemoSecrets = generateDemoSecrets(),
): Promise<DemoSecrets> {
  await importDocument(database, demoDocument(secrets));
  return secrets;
}

/** What an operator is shown once after seeding, one line each. */
export function describeDemoSecrets(secrets: DemoSecrets): string[] {
  return [
    `  User:          ${DEMO_USER_NAMES.user} / ${secrets.passwords.user}`,
    `  Administrator: ${DEMO_USER_NAMES.administrator} / ${secrets.passwords.administrator}`,
  ];
}

/**
 * Seeds the demo when the database has no site yet, once across every process that tries at the
 * same moment (servers started together, the CLI): they take turns under the migration lock and
 * the later ones find a site. Returns the secrets, or undefined when there was a site already.
 */
export async function seedDemoWhenEmpty(
  database: Pick<DbHandle, 'db' | 'provider'>,
  databaseUrl: string,
): Promise<DemoSecrets | undefined> {
  const { db } = database;
  if ((await db.site.count()) > 0) return undefined;
  return withMigrationLock(databaseUrl, async () => {
    if ((await db.site.count()) > 0) return undefined;
    return seedDemo(database);
  });
}
