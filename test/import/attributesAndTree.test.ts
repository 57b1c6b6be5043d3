import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import {
  computeChannelTree,
  detachedChannels,
  formatParentsPath,
  parseParentsPath,
} from '../../src/domain/channels/tree.ts';
import {
  DEFAULT_SITE_ATTRIBUTES,
  readSiteAttributes,
  SITE_ATTRIBUTE_NAMES,
  siteAttributeKind,
  validateSiteAttributes,
} from '../../src/domain/sites/attributes.ts';

/** The attribute table of docs/api/site-attributes.md (the original system's site record): kind → names. */
function specAttributes(): Map<string, string> {
  const section = readFileSync(new URL('../../docs/api/site-attributes.md', import.meta.url), 'utf8');
  const kinds = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const [, type, fields] = cells;
    if (!type || !fields || type === 'Type' || type.startsWith('---')) continue;
    // Notes such as "(separated by `,`)" are not field names.
    for (const field of fields.replace(/\([^)]*\)/g, '').split(',')) kinds.set(field.trim(), type);
  }
  return kinds;
}

const KIND_OF_SPEC_TYPE: Record<string, string[]> = {
  string: ['string', 'url', 'path'],
  'string holding a boolean word or a number': ['booleanWord', 'numberWord'],
  integer: ['integer'],
  boolean: ['boolean'],
  'date-time string': ['dateTime'],
  'string (allowed file types)': ['pipeList', 'commaList'],
};

describe('site attributes', () => {
  test('are exactly the fields of docs/api/site-attributes.md, each of its stated type', () => {
    const spec = specAttributes();
    expect([...spec.keys()].sort()).toEqual([...SITE_ATTRIBUTE_NAMES].sort());
    for (const [name, type] of spec) {
      expect(KIND_OF_SPEC_TYPE[type]).toContain(
        siteAttributeKind(name as (typeof SITE_ATTRIBUTE_NAMES)[number]),
      );
    }
  });

  test('every attribute has a default of its kind', () => {
    expect(SITE_ATTRIBUTE_NAMES).toHaveLength(79);
    expect(DEFAULT_SITE_ATTRIBUTES).toMatchObject({
      pageSize: 30,
      checkContentLevel: 1,
      isCheckContentLevel: false,
      charset: 'utf-8',
      imageUploadTypeCollection: 'gif|jpg|jpeg|bmp|png|pneg|swf|webp',
      configUploadImageIsTitleImage: 'True',
      createStaticContentAddDate: '2000-01-01 00:00:00',
    });
    for (const name of SITE_ATTRIBUTE_NAMES) expect(DEFAULT_SITE_ATTRIBUTES[name]).toBeDefined();
    expect(validateSiteAttributes({ ...DEFAULT_SITE_ATTRIBUTES })).toEqual({
      ok: true,
      value: DEFAULT_SITE_ATTRIBUTES,
    });
  });

  test('reading merges stored values over the defaults and drops what does not fit', () => {
    const attributes = readSiteAttributes(
      JSON.stringify({ pageSize: 5, isCountHits: true, checkContentLevel: 'high', somethingOld: 1 }),
    );
    expect(attributes.pageSize).toBe(5);
    expect(attributes.isCountHits).toBe(true);
    expect(attributes.checkContentLevel).toBe(1);
    expect(attributes).not.toHaveProperty('somethingOld');
    expect(readSiteAttributes('')).toEqual(DEFAULT_SITE_ATTRIBUTES);
    expect(readSiteAttributes('[1]')).toEqual(DEFAULT_SITE_ATTRIBUTES);
  });

  test('validation names every unknown key and wrong type', () => {
    const result = validateSiteAttributes({
      pageSize: '30',
      isCountHits: 'true',
      charset: 8,
      checkContentLevel: 6,
      configUploadImageIsTitleImage: 'maybe',
      configUploadImageTitleImageWidth: 'wide',
      createStaticContentAddDate: '2024-02-30',
      fileUploadTypeCollection: 'zip|rar',
      pagesize: 10,
    });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toEqual([
      { path: 'pageSize', message: "attribute 'pageSize' must be an integer" },
      { path: 'isCountHits', message: "attribute 'isCountHits' must be a boolean" },
      { path: 'charset', message: "attribute 'charset' must be a string" },
      { path: 'checkContentLevel', message: "attribute 'checkContentLevel' must be between 1 and 5" },
      {
        path: 'configUploadImageIsTitleImage',
        message: `attribute 'configUploadImageIsTitleImage' must be a string holding "True" or "False"`,
      },
      {
        path: 'configUploadImageTitleImageWidth',
        message: "attribute 'configUploadImageTitleImageWidth' must be a string holding a whole number",
      },
      {
        path: 'createStaticContentAddDate',
        message: "attribute 'createStaticContentAddDate' must be a date-time string yyyy-MM-dd HH:mm:ss",
      },
      {
        path: 'fileUploadTypeCollection',
        message: "attribute 'fileUploadTypeCollection' must be file extensions separated by ','",
      },
      { path: 'pagesize', message: "unknown attribute 'pagesize'" },
    ]);
    expect(validateSiteAttributes([])).toEqual({
      ok: false,
      errors: [{ path: '', message: 'attributes must be an object' }],
    });
  });

  test('valid partial attributes come back with dates in canonical form', () => {
    expect(
      validateSiteAttributes({ pageSize: 10, createStaticContentAddDate: '2024-03-01', isWaterMark: true }),
    ).toEqual({
      ok: true,
      value: { pageSize: 10, createStaticContentAddDate: '2024-03-01 00:00:00', isWaterMark: true },
    });
  });
});

describe('channel tree', () => {
  const channels = [
    { id: 1, parentId: 0 },
    { id: 2, parentId: 1 },
    { id: 3, parentId: 2 },
    { id: 4, parentId: 1 },
    { id: 5, parentId: 3 },
  ];

  test('computes ancestors root first and direct children counts', () => {
    const tree = computeChannelTree(channels);
    expect(Object.fromEntries(tree)).toEqual({
      1: { parentsPath: [], parentsCount: 0, childrenCount: 2 },
      2: { parentsPath: [1], parentsCount: 1, childrenCount: 1 },
      3: { parentsPath: [1, 2], parentsCount: 2, childrenCount: 1 },
      4: { parentsPath: [1], parentsCount: 1, childrenCount: 0 },
      5: { parentsPath: [1, 2, 3], parentsCount: 3, childrenCount: 0 },
    });
  });

  test('finds channels on or below a cycle and under a missing parent', () => {
    const broken = [
      ...channels,
      { id: 6, parentId: 7 },
      { id: 7, parentId: 6 },
      { id: 8, parentId: 7 },
      { id: 9, parentId: 99 },
    ];
    expect(detachedChannels(broken).sort((a, b) => a - b)).toEqual([6, 7, 8, 9]);
    expect(detachedChannels([{ id: 3, parentId: 3 }])).toEqual([3]);
    expect(() => computeChannelTree(broken)).toThrow('channels 6, 7, 8, 9 do not reach a root channel');
  });

  test('stores parentsPath comma-joined', () => {
    expect(formatParentsPath([1, 2, 3])).toBe('1,2,3');
    expect(parseParentsPath('1,2,3')).toEqual([1, 2, 3]);
    expect(parseParentsPath('')).toEqual([]);
  });
});
