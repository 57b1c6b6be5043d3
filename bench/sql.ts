import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';

/*
 * Floor C: each scenario's own SQL, written by hand per database and run through the driver the
 * service uses (better-sqlite3 / pg), with nothing else in between. It asks for exactly the answer
 * the service gives (the same rows in the same order, and the count where the service counts), so
 * the comparison with the service shows what everything above the SQL costs. It knows nothing of the
 * service's own queries or indexes: it is what a competent hand would write against the tables.
 */

export type Provider = 'sqlite' | 'postgresql';
export type Row = Record<string, unknown>;

export function providerOf(url: string): Provider {
  if (url.startsWith('file:')) return 'sqlite';
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return 'postgresql';
  throw new Error(`unsupported database URL scheme: ${url.split(':')[0]}`);
}

/** A statement in each dialect. */
type DialectSql = { sqlite: string; postgresql: string };

export interface Sql {
  provider: Provider;
  /** Rows of one statement; `sqlite` and `postgresql` hold the same statement for each database. */
  all(statement: DialectSql, params: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

export function openSql(url: string, poolSize = 10): Sql {
  const provider = providerOf(url);
  if (provider === 'sqlite') {
    const db = new Database(url.slice('file:'.length));
    // As the service does: readers never wait for the writer.
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    const prepared = new Map<string, Database.Statement>();
    return {
      provider,
      async all(statement, params) {
        let stmt = prepared.get(statement.sqlite);
        if (!stmt) {
          stmt = db.prepare(statement.sqlite);
          prepared.set(statement.sqlite, stmt);
        }
        return stmt.all(...params) as Row[];
      },
      async close() {
        db.close();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  return {
    provider,
    async all(statement, params) {
      return (await pool.query({ text: statement.postgresql, values: params })).rows as Row[];
    },
    async close() {
      await pool.end();
    },
  };
}

/** What the scenarios ask for; the same values go to the service and to the floors. */
export interface ScenarioParams {
  siteId: number;
  perPage: number;
  /** get-one and update: a content and its channel. */
  contentId: number;
  contentChannelId: number;
  /** update: the title written (the content's own, so that the data set stays the same). */
  updateTitle: string;
  /** filtered deep page: the subtree's root, the title word and the page. */
  subtreeId: number;
  word: string;
  deepPage: number;
  /** stl/contents: Descendant scope of this channel, Hits order, this many. */
  stlChannelId: number;
  stlTotal: number;
  /** hits: an approved content outside the stl scenario's channels, and its channel. */
  hitsContentId: number;
  hitsChannelId: number;
}

const SUBTREE = {
  // The channel and all its descendants, as the content list's channelId means.
  sqlite: `WITH RECURSIVE "scope"("id") AS (
    SELECT "id" FROM "Channel" WHERE "id" = ? AND "siteId" = ?
    UNION ALL SELECT c."id" FROM "Channel" c JOIN "scope" s ON c."parentId" = s."id")`,
  postgresql: `WITH RECURSIVE "scope"("id") AS (
    SELECT "id" FROM "Channel" WHERE "id" = $1 AND "siteId" = $2
    UNION ALL SELECT c."id" FROM "Channel" c JOIN "scope" s ON c."parentId" = s."id")`,
};

const DESCENDANTS = {
  // stl scope Descendant: all descendants, not the channel itself.
  sqlite: `WITH RECURSIVE "scope"("id") AS (
    SELECT "id" FROM "Channel" WHERE "parentId" = ? AND "siteId" = ?
    UNION ALL SELECT c."id" FROM "Channel" c JOIN "scope" s ON c."parentId" = s."id")`,
  postgresql: `WITH RECURSIVE "scope"("id") AS (
    SELECT "id" FROM "Channel" WHERE "parentId" = $1 AND "siteId" = $2
    UNION ALL SELECT c."id" FROM "Channel" c JOIN "scope" s ON c."parentId" = s."id")`,
};

/** Form B (stl) carries every field but the body: the floor reads only what the answer holds. */
const FORM_B_COLUMNS = [
  'id',
  'guid',
  'siteId',
  'channelId',
  'adminId',
  'lastEditAdminId',
  'userId',
  'taxis',
  'groupNames',
  'tagNames',
  'sourceId',
  'referenceId',
  'templateId',
  'checked',
  'checkedLevel',
  'hits',
  'hitsByDay',
  'hitsByWeek',
  'hitsByMonth',
  'lastHitsDate',
  'downloads',
  'title',
  'subTitle',
  'imageUrl',
  'videoUrl',
  'fileUrl',
  'summary',
  'author',
  'source',
  'top',
  'recommend',
  'hot',
  'color',
  'linkType',
  'linkUrl',
  'addUserName',
  'lastEditUserName',
  'writingUserName',
  'addDate',
  'createdDate',
  'lastModifiedDate',
  'lastEditDate',
  'settings',
]
  .map((column) => `"${column}"`)
  .join(', ');

// The hit counter: one statement, each period counter restarting at 1 when its period (day, week
// from Monday, month: the starts are bound) began after the last hit.
const HITS_SET = (p: (n: number) => string) => `UPDATE "Content" SET "hits" = "hits" + 1,
      "hitsByDay" = CASE WHEN "lastHitsDate" >= ${p(1)} THEN "hitsByDay" + 1 ELSE 1 END,
      "hitsByWeek" = CASE WHEN "lastHitsDate" >= ${p(2)} THEN "hitsByWeek" + 1 ELSE 1 END,
      "hitsByMonth" = CASE WHEN "lastHitsDate" >= ${p(3)} THEN "hitsByMonth" + 1 ELSE 1 END,
      "lastHitsDate" = ${p(4)}, "version" = "version" + 1`;

export const STATEMENTS = {
  getOne: {
    sqlite: `SELECT * FROM "Content" WHERE "id" = ? AND "siteId" = ? AND "channelId" = ? AND "recycled" = 0`,
    postgresql: `SELECT * FROM "Content" WHERE "id" = $1 AND "siteId" = $2 AND "channelId" = $3 AND NOT "recycled"`,
  },
  listPage: {
    sqlite: `SELECT * FROM "Content" WHERE "siteId" = ? AND "recycled" = 0
      ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC LIMIT ? OFFSET ?`,
    postgresql: `SELECT * FROM "Content" WHERE "siteId" = $1 AND NOT "recycled"
      ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC LIMIT $2 OFFSET $3`,
  },
  // list-fields: the default list's page, with only the columns of its fields.
  listFieldsPage: {
    sqlite: `SELECT "id", "channelId", "title", "addDate" FROM "Content" WHERE "siteId" = ? AND "recycled" = 0
      ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC LIMIT ? OFFSET ?`,
    postgresql: `SELECT "id", "channelId", "title", "addDate" FROM "Content" WHERE "siteId" = $1 AND NOT "recycled"
      ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC LIMIT $2 OFFSET $3`,
  },
  // list-fields-hits: the same with the hit counter.
  listFieldsHitsPage: {
    sqlite: `SELECT "id", "channelId", "title", "addDate", "hits" FROM "Content" WHERE "siteId" = ? AND "recycled" = 0
      ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC LIMIT ? OFFSET ?`,
    postgresql: `SELECT "id", "channelId", "title", "addDate", "hits" FROM "Content" WHERE "siteId" = $1 AND NOT "recycled"
      ORDER BY "top" DESC, "channelId" DESC, "taxis" DESC, "id" DESC LIMIT $2 OFFSET $3`,
  },
  // The default list's total as the service counts it: the sum of ContentTally's maintained counts.
  listTally: {
    sqlite: `SELECT SUM("count") AS "n" FROM "ContentTally" WHERE "siteId" = ?`,
    postgresql: `SELECT SUM("count") AS "n" FROM "ContentTally" WHERE "siteId" = $1`,
  },
  listCount: {
    sqlite: `SELECT COUNT(*) AS "n" FROM "Content" WHERE "siteId" = ? AND "recycled" = 0`,
    postgresql: `SELECT COUNT(*) AS "n" FROM "Content" WHERE "siteId" = $1 AND NOT "recycled"`,
  },
  // SQLite's LIKE ignores ASCII case; PostgreSQL's does not, so ILIKE gives the same (case-blind) answer.
  filteredPage: {
    sqlite: `${SUBTREE.sqlite} SELECT * FROM "Content" WHERE "siteId" = ? AND "recycled" = 0
      AND "channelId" IN (SELECT "id" FROM "scope") AND "hot" = 1 AND "title" LIKE ? ESCAPE '\\'
      ORDER BY "taxis" DESC, "id" ASC LIMIT ? OFFSET ?`,
    postgresql: `${SUBTREE.postgresql} SELECT * FROM "Content" WHERE "siteId" = $2 AND NOT "recycled"
      AND "channelId" IN (SELECT "id" FROM "scope") AND "hot" AND "title" ILIKE $3
      ORDER BY "taxis" DESC, "id" ASC LIMIT $4 OFFSET $5`,
  },
  filteredCount: {
    sqlite: `${SUBTREE.sqlite} SELECT COUNT(*) AS "n" FROM "Content" WHERE "siteId" = ? AND "recycled" = 0
      AND "channelId" IN (SELECT "id" FROM "scope") AND "hot" = 1 AND "title" LIKE ? ESCAPE '\\'`,
    postgresql: `${SUBTREE.postgresql} SELECT COUNT(*) AS "n" FROM "Content" WHERE "siteId" = $2 AND NOT "recycled"
      AND "channelId" IN (SELECT "id" FROM "scope") AND "hot" AND "title" ILIKE $3`,
  },
  stlContents: {
    sqlite: `${DESCENDANTS.sqlite} SELECT ${FORM_B_COLUMNS} FROM "Content" WHERE "siteId" = ? AND "recycled" = 0 AND "checked" = 1
      AND "channelId" IN (SELECT "id" FROM "scope") ORDER BY "hits" DESC, "id" DESC LIMIT ?`,
    postgresql: `${DESCENDANTS.postgresql} SELECT ${FORM_B_COLUMNS} FROM "Content" WHERE "siteId" = $2 AND NOT "recycled" AND "checked"
      AND "channelId" IN (SELECT "id" FROM "scope") ORDER BY "hits" DESC, "id" DESC LIMIT $3`,
  },
  update: {
    sqlite: `UPDATE "Content" SET "title" = ?, "lastModifiedDate" = ?, "lastEditDate" = ?
      WHERE "id" = ? AND "siteId" = ? AND "channelId" = ? AND "recycled" = 0 RETURNING *`,
    postgresql: `UPDATE "Content" SET "title" = $1, "lastModifiedDate" = $2, "lastEditDate" = $2
      WHERE "id" = $3 AND "siteId" = $4 AND "channelId" = $5 AND NOT "recycled" RETURNING *`,
  },
  // One statement, so atomic without a transaction: a pending content one taxis above the channel's
  // highest below the top contents' range (2,000,000,000), as the service places it.
  create: {
    sqlite: `INSERT INTO "Content" ("guid", "siteId", "channelId", "taxis", "title", "addDate", "createdDate",
        "lastModifiedDate", "lastEditDate")
      SELECT ?, ?, ?, COALESCE(MAX("taxis"), 0) + 1, ?, ?, ?, ?, ? FROM "Content"
      WHERE "siteId" = ? AND "recycled" = 0 AND "channelId" = ? AND "taxis" < 2000000000 RETURNING *`,
    postgresql: `INSERT INTO "Content" ("guid", "siteId", "channelId", "taxis", "title", "addDate", "createdDate",
        "lastModifiedDate", "lastEditDate")
      SELECT $1, $2, $3, COALESCE(MAX("taxis"), 0) + 1, $4, $5, $5, $5, $5 FROM "Content"
      WHERE "siteId" = $2 AND NOT "recycled" AND "channelId" = $3 AND "taxis" < 2000000000 RETURNING *`,
  },
  hits: {
    sqlite: `${HITS_SET(() => '?')} WHERE "id" = ? AND "siteId" = ? AND "channelId" = ? AND "checked" = 1
      AND "recycled" = 0 RETURNING "hits"`,
    postgresql: `${HITS_SET((n) => `$${n}`)} WHERE "id" = $5 AND "siteId" = $6 AND "channelId" = $7 AND "checked"
      AND NOT "recycled" RETURNING "hits"`,
  },
};

const count = (rows: Row[]) => Number(rows[0]?.n ?? 0);

/** The answers of floor C (and of naive D, which runs filteredDeep on a copy with fewer indexes). */
export function floorQueries(sql: Sql, p: ScenarioParams) {
  const s = sql.provider === 'sqlite';
  const offset = (p.deepPage - 1) * p.perPage;
  const pattern = `%${p.word}%`;
  /** The default list's first page with `page`'s columns, and its total by `total`. */
  const firstPage = async (page: DialectSql, total: DialectSql) => {
    const [contents, counted] = await Promise.all([
      sql.all(page, [p.siteId, p.perPage, 0]),
      sql.all(total, [p.siteId]),
    ]);
    return { contents, totalCount: count(counted) };
  };
  return {
    async getOne(): Promise<Row | undefined> {
      return (await sql.all(STATEMENTS.getOne, [p.contentId, p.siteId, p.contentChannelId]))[0];
    },
    listPage1: () => firstPage(STATEMENTS.listPage, STATEMENTS.listCount),
    listFields: () => firstPage(STATEMENTS.listFieldsPage, STATEMENTS.listCount),
    listFieldsHits: () => firstPage(STATEMENTS.listFieldsHitsPage, STATEMENTS.listCount),
    /** Floor R: the page's rows and the total from the maintained counts (no count of every match). */
    listPage1Rows: () => firstPage(STATEMENTS.listPage, STATEMENTS.listTally),
    listFieldsRows: () => firstPage(STATEMENTS.listFieldsPage, STATEMENTS.listTally),
    listFieldsHitsRows: () => firstPage(STATEMENTS.listFieldsHitsPage, STATEMENTS.listTally),
    async filteredDeep() {
      const page = s
        ? [p.subtreeId, p.siteId, p.siteId, pattern, p.perPage, offset]
        : [p.subtreeId, p.siteId, pattern, p.perPage, offset];
      const total = s ? [p.subtreeId, p.siteId, p.siteId, pattern] : [p.subtreeId, p.siteId, pattern];
      const [contents, counted] = await Promise.all([
        sql.all(STATEMENTS.filteredPage, page),
        sql.all(STATEMENTS.filteredCount, total),
      ]);
      return { contents, totalCount: count(counted) };
    },
    async stlContents() {
      const params = s
        ? [p.stlChannelId, p.siteId, p.siteId, p.stlTotal]
        : [p.stlChannelId, p.siteId, p.stlTotal];
      return { value: await sql.all(STATEMENTS.stlContents, params) };
    },
    async update(title: string): Promise<Row | undefined> {
      // Prisma keeps SQLite dates as epoch milliseconds; the floor writes them the same way.
      const now = s ? Date.now() : new Date();
      const params = s
        ? [title, now, now, p.contentId, p.siteId, p.contentChannelId]
        : [title, now, p.contentId, p.siteId, p.contentChannelId];
      return (await sql.all(STATEMENTS.update, params))[0];
    },
    async create(title: string): Promise<Row | undefined> {
      const now = s ? Date.now() : new Date();
      const params = s
        ? [
            randomUUID(),
            p.siteId,
            p.contentChannelId,
            title,
            now,
            now,
            now,
            now,
            p.siteId,
            p.contentChannelId,
          ]
        : [randomUUID(), p.siteId, p.contentChannelId, title, now];
      return (await sql.all(STATEMENTS.create, params))[0];
    },
    async hits(): Promise<{ value: number } | undefined> {
      const now = new Date();
      const day = new Date(now.getFullYear(), now.getMonth(), now.getDate());
      const week = new Date(day);
      week.setDate(day.getDate() - ((day.getDay() + 6) % 7));
      const month = new Date(now.getFullYear(), now.getMonth(), 1);
      const dates = [day, week, month, now].map((date) => (s ? date.getTime() : date));
      const [row] = await sql.all(STATEMENTS.hits, [...dates, p.hitsContentId, p.siteId, p.hitsChannelId]);
      return row && { value: Number(row.hits) };
    },
  };
}

export type FloorQueries = ReturnType<typeof floorQueries>;
