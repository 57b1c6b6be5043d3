import type { FloorQueries, ScenarioParams } from './sql.ts';

/*
 * The scenarios, each as the HTTP request a client sends to the service and as floor C's answer to
 * the same question. The service is a black box: only its public API is used.
 */

export type ScenarioName =
  | 'get-one'
  | 'list-page1'
  | 'list-fields'
  | 'list-fields-hits'
  | 'list-br'
  | 'list-gzip'
  | 'filtered-deep'
  | 'stl-contents'
  | 'update'
  | 'create'
  | 'hits';
/**
 * create comes after the reads: the contents it adds must not change what they measure. hits
 * comes last: the views it counts change the hits that stl-contents orders by (its content is
 * outside that scenario's channels all the same).
 */
export const SCENARIOS: ScenarioName[] = [
  'get-one',
  'list-page1',
  'list-fields',
  'list-fields-hits',
  'list-br',
  'list-gzip',
  'filtered-deep',
  'stl-contents',
  'update',
  'create',
  'hits',
];

/** The title every benchmark create gives its content. */
export const CREATE_TITLE = 'Added by the benchmark';

/** The fields list-fields asks for: a list page as a table of titles shows it. */
export const LIST_FIELDS = ['id', 'title', 'channelId', 'addDate'] as const;

/**
 * The fields list-fields-hits asks for: the same with the hit counter, which views move, so that no
 * process keeps the page as text (src/domain/contents/pageTexts.ts): each request reads the page's
 * rows and makes its records and text, the path of any page not asked before.
 */
export const LIST_FIELDS_HITS = [...LIST_FIELDS, 'hits'] as const;

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Headers of the scenario itself, sent to every target (the compressed lists' Accept-Encoding). */
  headers?: Record<string, string>;
}

/**
 * The compressed lists: the default list's first page asked for with one coding, as browsers (br)
 * and most other HTTP clients (gzip) ask. Every target compresses its answer for them.
 */
export const CODING_OF: Partial<Record<ScenarioName, 'br' | 'gzip'>> = {
  'list-br': 'br',
  'list-gzip': 'gzip',
};

/** Which list page floor R reads for a scenario: its own rows, for the list pages only. */
export function rowsPageOf(
  name: ScenarioName,
): 'list-page1' | 'list-fields' | 'list-fields-hits' | undefined {
  if (name === 'list-fields' || name === 'list-fields-hits') return name;
  return name === 'list-page1' || CODING_OF[name] !== undefined ? 'list-page1' : undefined;
}

export function serviceRequest(name: ScenarioName, p: ScenarioParams): HttpRequest {
  const json = (value: unknown) => JSON.stringify(value);
  switch (name) {
    case 'get-one':
      return { method: 'GET', path: `/api/v1/contents/${p.siteId}/${p.contentChannelId}/${p.contentId}` };
    case 'list-page1':
      return {
        method: 'POST',
        path: '/api/v1/contents',
        body: json({ siteId: p.siteId, perPage: p.perPage }),
      };
    case 'list-fields':
      return {
        method: 'POST',
        path: '/api/v1/contents',
        body: json({ siteId: p.siteId, perPage: p.perPage, fields: LIST_FIELDS }),
      };
    case 'list-fields-hits':
      return {
        method: 'POST',
        path: '/api/v1/contents',
        body: json({ siteId: p.siteId, perPage: p.perPage, fields: LIST_FIELDS_HITS }),
      };
    case 'list-br':
    case 'list-gzip':
      return {
        ...serviceRequest('list-page1', p),
        headers: { 'accept-encoding': CODING_OF[name] as string },
      };
    case 'filtered-deep':
      return {
        method: 'POST',
        path: '/api/v1/contents',
        body: json({
          siteId: p.siteId,
          channelId: p.subtreeId,
          hot: true,
          wheres: [{ column: 'title', operator: 'Like', value: `%${p.word}%` }],
          orders: [
            { column: 'taxis', desc: true },
            { column: 'id', desc: false },
          ],
          page: p.deepPage,
          perPage: p.perPage,
        }),
      };
    case 'stl-contents':
      return {
        method: 'GET',
        path: `/api/v1/stl/contents?siteId=${p.siteId}&channelId=${p.stlChannelId}&scope=Descendant&order=Hits&totalNum=${p.stlTotal}`,
      };
    case 'update':
      return {
        method: 'POST',
        path: `/api/v1/contents/${p.siteId}/${p.contentChannelId}/${p.contentId}/actions/update`,
        body: json({ title: p.updateTitle }),
      };
    case 'create':
      return {
        method: 'POST',
        path: `/api/v1/contents/${p.siteId}/${p.contentChannelId}`,
        body: json({ title: CREATE_TITLE }),
      };
    case 'hits':
      // As the page of a content calls it: no credentials are needed (the benchmark's key is sent
      // all the same, so that no rate limit applies).
      return {
        method: 'POST',
        path: '/api/stl/actions/hits',
        body: json({ siteId: p.siteId, channelId: p.hitsChannelId, contentId: p.hitsContentId }),
      };
  }
}

/**
 * "update under concurrent reads" (and create): one connection writes while the others read this
 * scenario.
 */
export const UPDATE_READS: ScenarioName = 'list-page1';

/** Floor C's answer to a scenario (the update takes the title from the request body). */
export async function floorAnswer(name: ScenarioName, q: FloorQueries, body: string): Promise<unknown> {
  switch (name) {
    case 'get-one':
      return q.getOne();
    case 'list-page1':
    case 'list-br':
    case 'list-gzip':
      return q.listPage1();
    case 'list-fields':
      return q.listFields();
    case 'list-fields-hits':
      return q.listFieldsHits();
    case 'filtered-deep':
      return q.filteredDeep();
    case 'stl-contents':
      return q.stlContents();
    case 'update':
      return q.update(String((JSON.parse(body) as { title?: unknown }).title));
    case 'create':
      return q.create(String((JSON.parse(body) as { title?: unknown }).title));
    case 'hits':
      return q.hits();
  }
}

/**
 * The guard of hits, whose answers count views: the second of two views in a row (the first by
 * one side, the second by the other) answers one more hit.
 */
export function sameHits(first: unknown, second: unknown): { ok: boolean; detail: string } {
  const value = (answer: unknown) => Number((answer as { value?: unknown } | null)?.value);
  const a = value(first);
  const b = value(second);
  const ok = Number.isInteger(a) && b === a + 1;
  return { ok, detail: ok ? `hits ${a}, then ${b}` : `hits: ${a} then ${b}` };
}

/**
 * The guard of create, whose answers cannot hold the same id: the second of two creates in a row
 * (the first by one side, the second by the other) is the next content, in the same channel with
 * the same title, one taxis higher: both put it at the top of the channel.
 */
export function sameCreate(first: unknown, second: unknown): { ok: boolean; detail: string } {
  const fields = (answer: unknown) => {
    const row = (answer ?? {}) as { id?: unknown; channelId?: unknown; taxis?: unknown; title?: unknown };
    return {
      id: Number(row.id),
      channelId: Number(row.channelId),
      taxis: Number(row.taxis),
      title: row.title,
    };
  };
  const a = fields(first);
  const b = fields(second);
  const ok =
    b.id === a.id + 1 && b.channelId === a.channelId && b.taxis === a.taxis + 1 && b.title === a.title;
  return {
    ok,
    detail: ok
      ? `ids ${a.id}, ${b.id} at taxis ${a.taxis}, ${b.taxis}`
      : `create: ${JSON.stringify(a)} then ${JSON.stringify(b)}`,
  };
}

/** The ids an answer holds, in order, and its total when it has one: what the guard compares. */
export function answerIds(body: unknown): { ids: number[]; total?: number } {
  if (typeof body !== 'object' || body === null) return { ids: [] };
  const record = body as { contents?: unknown; value?: unknown; totalCount?: unknown; id?: unknown };
  const list = Array.isArray(record.contents)
    ? record.contents
    : Array.isArray(record.value)
      ? record.value
      : null;
  if (list) {
    const ids = list.map((item) => Number((item as { id?: unknown }).id));
    return typeof record.totalCount === 'number' ? { ids, total: record.totalCount } : { ids };
  }
  return typeof record.id === 'number' ? { ids: [record.id] } : { ids: [] };
}
