import type { Prisma } from '../../db/models.ts';
import { identifier, joinSql, sql } from '../../db/sql.ts';
import { type AccountKind, UNIQUE_ACCOUNT_FIELDS, type UniqueAccountField } from '../accounts/rules.ts';
import { readSiteAttributes } from '../sites/attributes.ts';
import type { ParsedDocument, Table } from './document.ts';
import { chunks } from './fields.ts';

/*
 * What the database already holds that an import must not clash with or may refer to. Only rows
 * the file can touch are read (by the ids, names and keys it mentions), so importing into a large
 * database stays cheap.
 */

export type Tx = Prisma.TransactionClient;

/** Comfortably below the bound-parameter limits of SQLite (32766) and PostgreSQL (65535). */
const LOOKUP_CHUNK = 500;

export interface ExistingSite {
  id: number;
  siteDir: string;
  isRoot: boolean;
  checkContentLevel: number;
}

export interface ExistingChannel {
  id: number;
  siteId: number;
  parentId: number;
  indexName: string | null;
  parentsPath: string;
  parentsCount: number;
  childrenCount: number;
}

/** The ids and identifying values (UNIQUE_ACCOUNT_FIELDS) the database holds for a kind of account. */
export interface ExistingAccounts {
  ids: Set<number>;
  values: Record<UniqueAccountField, Set<string>>;
}

export interface DbState {
  sites: Map<number, ExistingSite>;
  /** The channels of every site the file adds channels to, and every channel it names by id. */
  channels: Map<number, ExistingChannel>;
  channelGuids: Set<string>;
  users: ExistingAccounts;
  administrators: ExistingAccounts;
  apiKeyIds: Set<number>;
  apiKeyDigests: Set<string>;
  maxIds: Record<Table, number>;
}

const defined = <T>(items: readonly (T | null | undefined)[]): T[] => [
  ...new Set(items.filter((item): item is T => item !== null && item !== undefined)),
];

async function collect<T, R>(values: readonly T[], query: (slice: T[]) => Promise<R[]>): Promise<R[]> {
  const rows: R[] = [];
  for (const slice of chunks(values, LOOKUP_CHUNK)) rows.push(...(await query(slice)));
  return rows;
}

type AccountRow = { id: number } & Partial<Record<UniqueAccountField, string | null>>;

function accountsOf(kind: AccountKind, rows: readonly AccountRow[]): ExistingAccounts {
  const fields: readonly UniqueAccountField[] = UNIQUE_ACCOUNT_FIELDS[kind];
  const values = Object.fromEntries(
    (['userName', 'email', 'mobile', 'openId'] as const).map((field) => [
      field,
      new Set(fields.includes(field) ? defined(rows.map((row) => row[field])) : []),
    ]),
  ) as Record<UniqueAccountField, Set<string>>;
  return { ids: new Set(rows.map((row) => row.id)), values };
}

/** Where the accounts holding any id or identifying value of `records` are found. */
function accountWhere(
  kind: AccountKind,
  records: readonly {
    value: { id?: number | undefined } & Partial<Record<UniqueAccountField, string | null>>;
  }[],
) {
  const fields: readonly UniqueAccountField[] = UNIQUE_ACCOUNT_FIELDS[kind];
  return {
    OR: [
      { id: { in: defined(records.map((record) => record.value.id)) } },
      ...fields.map((field) => ({ [field]: { in: defined(records.map((record) => record.value[field])) } })),
    ],
  };
}

const CHANNEL_FIELDS = {
  id: true,
  siteId: true,
  parentId: true,
  indexName: true,
  parentsPath: true,
  parentsCount: true,
  childrenCount: true,
} as const;

export async function loadState(tx: Tx, doc: ParsedDocument): Promise<DbState> {
  const siteRows = await tx.site.findMany({
    select: { id: true, siteDir: true, isRoot: true, attributes: true },
  });
  const sites = new Map(
    siteRows.map((row) => [
      row.id,
      { ...row, checkContentLevel: readSiteAttributes(row.attributes).checkContentLevel },
    ]),
  );

  const channelIdsNamed = defined([
    ...doc.sites.map((site) => site.value.id),
    ...doc.channels.flatMap((channel) => [channel.value.id, channel.value.parentId]),
    ...doc.contents.channelIds,
  ]);
  const channelSites = defined(doc.channels.map((channel) => channel.value.siteId));
  const channelRows = [
    ...(await collect(channelIdsNamed, (ids) =>
      tx.channel.findMany({ where: { id: { in: ids } }, select: CHANNEL_FIELDS }),
    )),
    ...(await collect(channelSites, (siteIds) =>
      tx.channel.findMany({ where: { siteId: { in: siteIds } }, select: CHANNEL_FIELDS }),
    )),
  ];

  const guidsOf = (records: readonly { value: { guid?: string | undefined } }[]) =>
    defined(records.map((record) => record.value.guid));
  const channelGuids = await collect(guidsOf(doc.channels), (guids) =>
    tx.channel.findMany({ where: { guid: { in: guids } }, select: { guid: true } }),
  );

  const userRows = await collect(doc.users, (slice) =>
    tx.user.findMany({
      where: accountWhere('users', slice),
      select: { id: true, userName: true, email: true, mobile: true, openId: true },
    }),
  );
  const administratorRows = await collect(doc.administrators, (slice) =>
    tx.administrator.findMany({
      where: accountWhere('administrators', slice),
      select: { id: true, userName: true, email: true, mobile: true },
    }),
  );
  const apiKeyRows = await collect(doc.apiKeys, (slice) =>
    tx.apiKey.findMany({
      where: {
        OR: [
          { id: { in: defined(slice.map((key) => key.value.id)) } },
          { digest: { in: slice.map((key) => key.value.digest) } },
        ],
      },
      select: { id: true, digest: true },
    }),
  );

  // One after another: an interactive transaction runs on a single connection.
  const site = await tx.site.aggregate({ _max: { id: true } });
  const channel = await tx.channel.aggregate({ _max: { id: true } });
  const content = await tx.content.aggregate({ _max: { id: true } });
  const user = await tx.user.aggregate({ _max: { id: true } });
  const administrator = await tx.administrator.aggregate({ _max: { id: true } });
  const apiKey = await tx.apiKey.aggregate({ _max: { id: true } });

  return {
    sites,
    channels: new Map(channelRows.map((row) => [row.id, row])),
    channelGuids: new Set(channelGuids.map((row) => row.guid)),
    users: accountsOf('users', userRows),
    administrators: accountsOf('administrators', administratorRows),
    apiKeyIds: new Set(apiKeyRows.map((row) => row.id)),
    apiKeyDigests: new Set(apiKeyRows.map((row) => row.digest)),
    maxIds: {
      sites: site._max.id ?? 0,
      channels: channel._max.id ?? 0,
      contents: content._max.id ?? 0,
      users: user._max.id ?? 0,
      administrators: administrator._max.id ?? 0,
      apiKeys: apiKey._max.id ?? 0,
    },
  };
}

/**
 * The ids and guids of one batch of contents that the database already holds. Contents are
 * checked batch by batch in the write pass, so their lookups never hold more than a batch.
 */
export async function existingContents(
  tx: Tx,
  ids: readonly number[],
  guids: readonly string[],
): Promise<{ ids: Set<number>; guids: Set<string> }> {
  // Raw SQL: the client would cache a query plan for every distinct list of values (tens of MB
  // over a large import), while this text is the same for every full batch.
  const idRows = await collect(defined(ids), (slice) =>
    tx.$queryRaw<{ id: number }[]>(
      sql`SELECT ${identifier('id')} FROM ${identifier('Content')} WHERE ${identifier('id')} IN (${joinSql(slice)})`,
    ),
  );
  const guidRows = await collect(defined(guids), (slice) =>
    tx.$queryRaw<{ guid: string }[]>(
      sql`SELECT ${identifier('guid')} FROM ${identifier('Content')} WHERE ${identifier('guid')} IN (${joinSql(slice)})`,
    ),
  );
  return {
    ids: new Set(idRows.map((row) => Number(row.id))),
    guids: new Set(guidRows.map((row) => row.guid)),
  };
}
