import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Db } from '../../src/db/client.ts';
import type { Content } from '../../src/db/models.ts';
import { MODEL_FIELDS } from '../../src/db/models.ts';
import { type Sql, sql } from '../../src/db/sql.ts';
import {
  contentsInOrder,
  placedPicked,
  rowColumns,
  TEXT_PIECE_CHARACTERS,
  WHOLE_ROW_TEXT_BYTES,
} from '../../src/domain/contents/list.ts';
import { pageRecords } from '../../src/domain/contents/recordTexts.ts';
import { STREAM_AFTER_BYTES } from '../../src/domain/longWork.ts';
import { SLICE_UNITS } from '../../src/http/pages.ts';
import type { TestApp } from '../support/app.ts';
import { startFixtureApp } from '../support/fixtures.ts';
import { type Listening, listen } from '../support/server.ts';

/*
 * A page of large records is streamed record by record (src/http/pages.ts,
 * docs/security/time-limits.md): the worker answers other requests while it is sent. No
 * durations are asserted: the probes count what was answered while the large pages were in flight.
 */

// Each record of a list page (form A) carries its body twice (`content` and `body`).
const BODY_CHARACTERS = Math.floor(STREAM_AFTER_BYTES / 2.5);
const bodyOf = (id: number) => `${'é'.repeat(10)}${String(id).repeat(BODY_CHARACTERS - 10)}`;

describe('pages of large records', () => {
  let fixture: TestApp;
  let key: string;
  let server: Listening;
  let contentIds: { id: number; channelId: number }[];

  beforeAll(async () => {
    // Uncompressed answers: what is measured here is the text and how it is sent.
    ({ app: fixture, key } = await startFixtureApp('all', { config: { compressMinBytes: undefined } }));
    contentIds = await fixture.db.content.findMany({ select: { id: true, channelId: true } });
    for (const { id } of contentIds)
      await fixture.db.content.update({ where: { id }, data: { body: bodyOf(id), checked: true } });
    server = await listen(fixture.app);
  });
  afterAll(async () => {
    await server?.close();
    await fixture?.close();
  });

  const list = (perPage: number) =>
    fetch(`${server.base}/api/v1/contents`, {
      method: 'POST',
      headers: { 'x-ss-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ siteId: 1, perPage }),
    });

  test('a page under the threshold is one text with Content-Length and ETag', async () => {
    const response = await list(1);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(response.headers.get('etag')).toMatch(/^W\/"/);
    const page = JSON.parse(text) as { contents: { id: number; body: string }[] };
    expect(page.contents).toHaveLength(1);
  });

  test('a larger page is streamed: chunked, no ETag, the same JSON as whole', async () => {
    const response = await list(1000);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('etag')).toBeNull();
    const page = JSON.parse(text) as {
      totalCount: number;
      contents: { id: number; body: string; content: string }[];
    };
    expect(text).toBe(JSON.stringify(page));
    expect(page.totalCount).toBeGreaterThan(3);
    expect(page.contents).toHaveLength(page.totalCount);
    for (const content of page.contents) {
      expect(content.body).toBe(bodyOf(content.id));
      expect(content.content).toBe(bodyOf(content.id));
    }
  });

  test('long texts written slice by slice are the same JSON: escapes, and surrogate pairs across the cuts', async () => {
    const [first] = contentIds as [{ id: number; channelId: number }];
    // A pair whose halves straddle a cut (at SLICE_UNITS) and one just after it; quotes, backslashes,
    // a newline and a control character to escape; past the streaming threshold.
    const odd = `${'x'.repeat(SLICE_UNITS - 1)}😀"\\\n\u0001${'y'.repeat(SLICE_UNITS - 3)}😀${'é'.repeat(STREAM_AFTER_BYTES)}`;
    const before = await fixture.db.content.findUniqueOrThrow({ where: { id: first.id } });
    await fixture.db.content.update({
      where: { id: first.id },
      data: { body: odd, summary: odd.slice(0, 70_000) },
    });
    try {
      const response = await list(1000);
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(response.headers.get('transfer-encoding')).toBe('chunked');
      const page = JSON.parse(text) as { contents: { id: number; body: string; summary: string }[] };
      expect(text).toBe(JSON.stringify(page));
      const record = page.contents.find(({ id }) => id === first.id);
      expect(record?.body).toBe(odd);
      expect(record?.summary).toBe(odd.slice(0, 70_000));
    } finally {
      await fixture.db.content.update({
        where: { id: first.id },
        data: { body: before.body, summary: before.summary },
      });
    }
  });

  test('a long text read in pieces is the text stored, whatever characters stand at the cuts', async () => {
    const [first] = contentIds as [{ id: number; channelId: number }];
    const before = await fixture.db.content.findUniqueOrThrow({ where: { id: first.id } });
    // The first piece (TEXT_PIECE_CHARACTERS characters) ends on a two-byte character; after it,
    // three- and four-byte characters (a surrogate pair in JavaScript), so that cuts by bytes
    // (PostgreSQL) and by characters (SQLite) fall inside characters and between the halves of pairs.
    const odd = `${'a'.repeat(TEXT_PIECE_CHARACTERS - 1)}é${'€😀'.repeat(TEXT_PIECE_CHARACTERS / 2)}z`;
    await fixture.db.content.update({ where: { id: first.id }, data: { body: odd, summary: `é${odd}` } });
    try {
      const [row] = await contentsInOrder(fixture.services, [first.id]);
      expect(row?.body.length).toBe(odd.length);
      expect(row?.body).toBe(odd);
      expect(row?.summary).toBe(`é${odd}`);
    } finally {
      await fixture.db.content.update({
        where: { id: first.id },
        data: { body: before.body, summary: before.summary },
      });
    }
  });

  /**
   * The first three contents, the second's texts each under the bound of a whole row but together
   * over it (two-byte characters: the bound counts bytes), the others short; `restore` puts back
   * what they held.
   */
  async function oneLongAmongThree() {
    const [first, second, third] = contentIds as [
      { id: number; channelId: number },
      { id: number; channelId: number },
      { id: number; channelId: number },
    ];
    const before = await fixture.db.content.findMany({
      where: { id: { in: [first.id, second.id, third.id] } },
    });
    const half = 'é'.repeat(Math.ceil(WHOLE_ROW_TEXT_BYTES / 4) + 1);
    await fixture.db.content.update({ where: { id: second.id }, data: { body: half, summary: `${half}s` } });
    await fixture.db.content.update({ where: { id: first.id }, data: { body: 'first €', summary: '' } });
    await fixture.db.content.update({ where: { id: third.id }, data: { body: 'third 😀', summary: '' } });
    const restore = async () => {
      for (const { id, body, summary } of before)
        await fixture.db.content.update({ where: { id }, data: { body, summary } });
    };
    return { first, second, third, half, restore };
  }

  test('rows whose texts are short together are read whole in one statement; a row whose texts are long together, in pieces', async () => {
    const { first, second, third, half, restore } = await oneLongAmongThree();
    const { reads } = fixture.services;
    const statements: string[] = [];
    const prepared: string[] = [];
    const chosen: string[] = [];
    const observedReads: typeof reads = {
      ...reads,
      rows: async (statement) => {
        statements.push(statement.sql);
        return reads.rows(statement);
      },
      prepared: async (statement) => {
        statements.push(statement.sql);
        prepared.push(statement.sql);
        return reads.prepared(statement);
      },
      chosen: async (statement) => {
        statements.push(statement.sql);
        chosen.push(statement.sql);
        return reads.chosen(statement);
      },
    };
    try {
      const ids = [third.id, 999_999, second.id, first.id];
      const rows = await contentsInOrder({ ...fixture.services, reads: observedReads }, ids);
      // In the order asked, the missing id left out, every text whole.
      expect(rows.map(({ id }) => id)).toEqual([third.id, second.id, first.id]);
      expect(rows[1]?.body).toBe(half);
      expect(rows[1]?.summary).toBe(`${half}s`);
      expect(rows[0]?.body).toBe('third 😀');
      expect(rows[2]?.body).toBe('first €');
      // One statement for the short rows, then the long row (and the missing id) cut in pieces.
      expect(statements).toHaveLength(2);
      expect(statements[0]).toContain('octet_length');
      expect(statements[0]).not.toContain('AS "body__length"');
      expect(statements[1]).toContain('AS "body__length"');
      // The whole columns are a list the code names: their read of short rows is prepared once.
      expect(prepared).toEqual([statements[0]]);
      // A list a request chose is read as a chosen text: prepared only while few are (pointReads.test.ts).
      statements.length = 0;
      prepared.length = 0;
      await contentsInOrder(
        { ...fixture.services, reads: observedReads },
        [first.id],
        rowColumns(['id', 'title', 'version']),
      );
      expect(statements).toHaveLength(1);
      expect(prepared).toEqual([]);
      expect(chosen).toEqual(statements);

      statements.length = 0;
      const short = await contentsInOrder({ ...fixture.services, reads: observedReads }, [
        first.id,
        third.id,
      ]);
      expect(short.map(({ id }) => id)).toEqual([first.id, third.id]);
      expect(statements).toHaveLength(1);
    } finally {
      await restore();
    }
  });

  test("a pick not kept: its contents placed (PostgreSQL: in the pick's statement), then their rows, a long row in pieces in its place", async () => {
    const { first, second, third, half, restore } = await oneLongAmongThree();
    const { reads, costly, provider } = fixture.services;
    const statements: string[] = [];
    const observe = (statement: Sql) => {
      statements.push(statement.sql);
      return statement;
    };
    const observed = {
      ...fixture.services,
      reads: {
        ...reads,
        rows: <T>(statement: Sql) => reads.rows<T>(observe(statement)),
        prepared: <T>(statement: Sql) => reads.prepared<T>(observe(statement)),
        chosen: <T>(statement: Sql) => reads.chosen<T>(observe(statement)),
      },
      costly: {
        all: <T>(statement: Sql) => costly.all<T>(observe(statement)),
        matchingTexts: <T>(work: () => Promise<T>) => costly.matchingTexts(work),
      },
    };
    // The three by id descending, then from the second on: windows of the same order.
    const windowOf = (offset: number) => ({
      where: sql`WHERE "id" IN (${first.id}, ${second.id}, ${third.id})`,
      orderBy: sql`ORDER BY "id" DESC`,
      limit: 3,
      offset,
    });
    const descending = [first.id, second.id, third.id].sort((a, b) => b - a);
    const columns = rowColumns(MODEL_FIELDS.Content);
    // A kind of record of its own each time: no text kept by an earlier read answers.
    let kinds = 0;
    const rowsOf = async (offset: number, readsRows = false): Promise<Content[]> => {
      const { placed } = await placedPicked(observed, windowOf(offset), readsRows);
      const page = await pageRecords(observed, placed, 'test', `rows-${kinds++}`, columns, (row) => row);
      return 'records' in page ? page.records : page.texts.map((text) => JSON.parse(text) as Content);
    };
    try {
      // The long row's text is longer than a kept record: the page comes as its rows.
      const rows = await rowsOf(0);
      expect(rows.map(({ id }) => id)).toEqual(descending);
      const byId = new Map(rows.map((row) => [row.id, row]));
      expect(byId.get(second.id)?.body).toBe(half);
      expect(byId.get(second.id)?.summary).toBe(`${half}s`);
      expect(byId.get(first.id)?.body).toBe('first €');
      expect(byId.get(third.id)?.body).toBe('third 😀');
      // Every field as contentsInOrder reads it (dates, booleans, numbers).
      const inOrder = await contentsInOrder(fixture.services, descending);
      for (const [index, row] of rows.entries())
        for (const field of MODEL_FIELDS.Content)
          expect([field, row[field]]).toEqual([field, inOrder[index]?.[field]]);
      // PostgreSQL: the pick with the contents' versions, the short rows, the long row in pieces;
      // SQLite: the pick, the versions, the short rows by id, the long row in pieces.
      expect(statements).toHaveLength(provider === 'postgresql' ? 3 : 4);
      expect(statements.at(-1)).toContain('AS "body__length"');

      statements.length = 0;
      const window = await rowsOf(1);
      expect(window.map(({ id }) => id)).toEqual(descending.slice(1));
      await fixture.db.content.update({ where: { id: second.id }, data: { body: 'short', summary: '' } });
      statements.length = 0;
      const short = await rowsOf(0);
      expect(short.map(({ id }) => id)).toEqual(descending);
      expect(short.map(({ body }) => body)).toEqual(
        descending.map((id) => (byId.get(id)?.body === half ? 'short' : byId.get(id)?.body)),
      );
      expect(statements).toHaveLength(provider === 'postgresql' ? 2 : 3);
      // A pick that reads its matches' rows anyway reads their versions itself: one statement on both.
      statements.length = 0;
      expect((await rowsOf(1, true)).map(({ id }) => id)).toEqual(descending.slice(1));
      expect(statements).toHaveLength(2);
      expect(statements[0]).toMatch(/^SELECT "id", "version", "hits" FROM "Content" WHERE "id" IN/);

      // Asked to check a site, each way reads the site's generation in its own statements, beside
      // the same contents; nothing placed carries none.
      const { siteId } = await fixture.db.content.findUniqueOrThrow({ where: { id: first.id } });
      const stored = await fixture.db.contentGeneration.findUnique({ where: { siteId } });
      const generation = String(stored?.generation ?? 0n);
      for (const readsRows of [false, true]) {
        statements.length = 0;
        const read = await placedPicked(observed, windowOf(1), readsRows, siteId);
        expect(read.placed.map(({ id }) => id)).toEqual(descending.slice(1));
        expect(read.generation).toBe(generation);
        expect(statements).toHaveLength(readsRows || provider === 'postgresql' ? 1 : 2);
      }
      const none = await placedPicked(observed, windowOf(3), false, siteId);
      expect(none).toEqual({ placed: [], generation: undefined });
    } finally {
      await restore();
    }
  });

  test('a long text read in pieces is never made of two versions: a row written meanwhile is read again', async () => {
    const [first] = contentIds as [{ id: number; channelId: number }];
    const before = await fixture.db.content.findUniqueOrThrow({ where: { id: first.id } });
    const old = 'o'.repeat(TEXT_PIECE_CHARACTERS * 2 + 5);
    const written = 'n'.repeat(TEXT_PIECE_CHARACTERS * 2 + 5);
    await fixture.db.content.update({ where: { id: first.id }, data: { body: old } });
    // The client as contentsInOrder sees it, but the row is written (as the service writes: its
    // version moves) just before the first piece after the first is read.
    let writes = 0;
    // The write, once, before the first statement that reads a piece (through Prisma's client on
    // SQLite, through the driver's reads on PostgreSQL).
    const writeBefore = async (text: string) => {
      if (writes > 0 || !text.includes('AS "piece"')) return;
      writes += 1;
      await fixture.db.content.update({
        where: { id: first.id },
        data: { body: written, version: { increment: 1 } },
      });
    };
    const db = new Proxy(fixture.db, {
      get(target, key, receiver) {
        if (key !== '$queryRaw') return Reflect.get(target, key, receiver);
        return async (query: { strings: readonly string[] }, ...rest: unknown[]) => {
          await writeBefore(query.strings.join('?'));
          return (target.$queryRaw as (...args: unknown[]) => Promise<unknown>)(query, ...rest);
        };
      },
    }) as Db;
    const { reads } = fixture.services;
    const observedReads: typeof reads = {
      ...reads,
      rows: async (statement) => {
        await writeBefore(statement.sql);
        return reads.rows(statement);
      },
    };
    try {
      const [row] = await contentsInOrder({ ...fixture.services, db, reads: observedReads }, [first.id]);
      expect(writes).toBe(1);
      expect(row?.body).toBe(written);
    } finally {
      await fixture.db.content.update({ where: { id: first.id }, data: { body: before.body } });
    }
  });

  test('stl/contents (form B, no body) is one text, byte for byte as serialised whole', async () => {
    const response = await fetch(`${server.base}/api/v1/stl/contents?siteId=1&scope=All`, {
      headers: { 'x-ss-api-key': key },
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    const page = JSON.parse(text) as { value: { id: number }[] };
    expect(text).toBe(JSON.stringify(page));
    expect(page.value.length).toBeGreaterThan(3);
  });

  test('ping and get-by-id are answered while several large pages are in flight', async () => {
    const [first] = contentIds as [{ id: number; channelId: number }];
    let inFlight = 4;
    const large = Array.from({ length: inFlight }, async () => {
      const response = await list(1000);
      const page = (await response.json()) as {
        totalCount: number;
        contents: { id: number; body: string }[];
      };
      inFlight -= 1;
      return { status: response.status, page };
    });
    const probes: number[] = [];
    let answeredInFlight = 0;
    const probing = (async () => {
      while (inFlight > 0) {
        const [ping, one] = await Promise.all([
          fetch(`${server.base}/api/v1/ping`),
          fetch(`${server.base}/api/v1/contents/1/${first.channelId}/${first.id}`, {
            headers: { 'x-ss-api-key': key },
          }),
        ]);
        await Promise.all([ping.arrayBuffer(), one.arrayBuffer()]);
        probes.push(ping.status, one.status);
        if (inFlight > 0) answeredInFlight += 1;
      }
    })();
    const answers = await Promise.all(large);
    await probing;
    for (const { status, page } of answers) {
      expect(status).toBe(200);
      expect(page.contents).toHaveLength(page.totalCount);
      for (const content of page.contents) expect(content.body).toBe(bodyOf(content.id));
    }
    expect(probes.every((status) => status === 200)).toBe(true);
    expect(answeredInFlight).toBeGreaterThan(0);
  });

  // Last: it moves every content to the recycle bin.
  test('the recycle bin streams its large pages too', async () => {
    await fixture.db.content.updateMany({ data: { recycled: true, recycledDate: new Date() } });
    const response = await fetch(`${server.base}/api/v1/contents/1/recycle?perPage=1000`, {
      headers: { 'x-ss-api-key': key },
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('etag')).toBeNull();
    const page = JSON.parse(text) as { totalCount: number; contents: { id: number; body: string }[] };
    expect(text).toBe(JSON.stringify(page));
    expect(page.totalCount).toBeGreaterThan(3);
    expect(page.contents).toHaveLength(page.totalCount);
    for (const content of page.contents) expect(content.body).toBe(bodyOf(content.id));
  });
});
