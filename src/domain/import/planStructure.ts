import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../db/models.ts';
import {
  type ChannelLink,
  computeChannelTree,
  detachedChannels,
  formatParentsPath,
} from '../channels/tree.ts';
import { DEFAULT_SITE_ATTRIBUTES } from '../sites/attributes.ts';
import type { ParsedChannel, ParsedDocument, ParsedSite } from './document.ts';
import { type ImportProblems, idCounter, UniqueCheck } from './fields.ts';
import { channelSchema } from './records.ts';
import type { DbState } from './state.ts';

/*
 * Sites and channels: the checks that need the database and the whole file, the ids the file left
 * out, the root channels it did not list, and the derived tree fields of every site it touches.
 */

export interface StructurePlan {
  sites: Prisma.SiteCreateManyInput[];
  channels: Prisma.ChannelCreateManyInput[];
  rootChannelsCreated: number;
  /** Existing channels whose tree fields change because the file adds channels below them. */
  channelUpdates: { id: number; parentsPath: string; parentsCount: number; childrenCount: number }[];
  /** checkContentLevel of every site a content may belong to. */
  siteLevels: Map<number, number>;
  /** The site of every channel a content may name (file, created roots, database). */
  channelSites: Map<number, number>;
  /** Ids of sites and channels with problems: references to them raise no second problem. */
  brokenSiteIds: Set<number>;
  brokenChannelIds: Set<number>;
}

function checkSites(doc: ParsedDocument, state: DbState, problems: ImportProblems): ParsedSite[] {
  const fileSiteIds = new Set(doc.sites.map((site) => site.value.id));
  const siteExists = (id: number) =>
    state.sites.has(id) || fileSiteIds.has(id) || doc.brokenIds.sites.has(id);
  const existingDirs = new Set([...state.sites.values()].map((site) => site.siteDir));
  const ids = new UniqueCheck<number>('id', (id) => state.sites.has(id), problems);
  const dirs = new UniqueCheck<string>('siteDir', (dir) => existingDirs.has(dir), problems);
  const existingRoot = [...state.sites.values()].find((site) => site.isRoot);
  let rootOwner = existingRoot ? `site ${existingRoot.id}` : undefined;

  return doc.sites.filter(({ ref, value }) => {
    const before = problems.count;
    ids.claim(ref, value.id);
    dirs.claim(ref, value.siteDir, `'${value.siteDir}'`);
    if (value.isRoot) {
      if (rootOwner) problems.add(ref, `only one site can be the root site, and ${rootOwner} already is`);
      else rootOwner = `${ref.table}[${ref.index}]`;
    }
    if (value.parentId !== 0 && value.parentId === value.id) {
      problems.add(ref, 'a site cannot be its own parent');
    } else if (value.parentId !== 0 && !siteExists(value.parentId)) {
      problems.add(ref, `parent site ${value.parentId} does not exist`);
    }
    const taken =
      value.id === undefined || state.sites.has(value.id) ? undefined : state.channels.get(value.id);
    if (taken) {
      problems.add(
        ref,
        `its root channel needs id ${value.id}, which channel ${taken.id} of site ${taken.siteId} has`,
      );
    }
    if (problems.count === before) return true;
    if (value.id !== undefined) doc.brokenIds.sites.add(value.id);
    return false;
  });
}

interface ChannelContext {
  /** Site id → its new site record, for sites the file creates. */
  newSites: Map<number, ParsedSite['value']>;
  brokenSiteIds: ReadonlySet<number>;
  channelSiteOf: (id: number) => number | undefined;
}

/**
 * Ids that only records with problems claim. A failed record whose id the database or a valid
 * record also holds does not hide that one: references to it are checked as usual.
 */
function brokenOnly(claimed: Iterable<number>, valid: (id: number) => boolean): Set<number> {
  return new Set([...claimed].filter((id) => !valid(id)));
}

function checkChannels(
  doc: ParsedDocument,
  state: DbState,
  problems: ImportProblems,
  context: ChannelContext,
): ParsedChannel[] {
  const fileSiteIds = new Set([...context.newSites.keys(), ...context.brokenSiteIds]);
  const brokenParents = brokenOnly(doc.brokenIds.channels, (id) => context.channelSiteOf(id) !== undefined);
  const ids = new UniqueCheck<number>('id', (id) => state.channels.has(id), problems);
  const guids = new UniqueCheck<string>('guid', (guid) => state.channelGuids.has(guid), problems);
  const existingIndexNames = new Set(
    [...state.channels.values()].flatMap((channel) =>
      channel.indexName === null ? [] : [`${channel.siteId}:${channel.indexName}`],
    ),
  );
  const indexNames = new UniqueCheck<string>('indexName', (key) => existingIndexNames.has(key), problems);

  return doc.channels.filter(({ ref, value }) => {
    const { id, siteId, parentId } = value;
    const before = problems.count;
    ids.claim(ref, id);
    if (id !== undefined && id !== siteId && (state.sites.has(id) || fileSiteIds.has(id))) {
      problems.add(ref, `id ${id} is reserved for the root channel of site ${id}`);
    }
    guids.claim(ref, value.guid, `'${value.guid}'`);
    if (context.brokenSiteIds.has(siteId)) {
      // The site has problems of its own; its channels are checked again once it is fixed.
    } else if (!state.sites.has(siteId) && !context.newSites.has(siteId)) {
      problems.add(ref, `site ${siteId} does not exist`);
    } else {
      if (id === siteId) {
        if (parentId) problems.add(ref, `the root channel of site ${siteId} must have parentId 0`);
      } else if (!parentId) {
        problems.add(
          ref,
          `parentId is required: only the root channel of site ${siteId} (id ${siteId}) has none`,
        );
      } else if (!brokenParents.has(parentId)) {
        const parentSite = context.channelSiteOf(parentId);
        if (parentSite === undefined) {
          problems.add(ref, `parent channel ${parentId} does not exist in site ${siteId}`);
        } else if (parentSite !== siteId) {
          problems.add(ref, `parent channel ${parentId} belongs to site ${parentSite}, not site ${siteId}`);
        }
      }
      if (value.indexName) {
        indexNames.claim(ref, `${siteId}:${value.indexName}`, `'${value.indexName}' in site ${siteId}`);
      }
    }
    if (problems.count === before) return true;
    if (id !== undefined) doc.brokenIds.channels.add(id);
    return false;
  });
}

/** The channel record of a root channel the file did not list: named after its site. */
function rootChannel(siteId: number, site: ParsedSite['value']): ParsedChannel['value'] {
  return {
    ...channelSchema.parse({ id: siteId, siteId, parentId: 0, channelName: site.siteName }),
    extras: {},
  };
}

export function planStructure(
  doc: ParsedDocument,
  state: DbState,
  problems: ImportProblems,
  now: Date,
): StructurePlan {
  const sites = checkSites(doc, state, problems);
  const nextSiteId = idCounter([
    state.maxIds.sites,
    state.maxIds.channels,
    ...doc.sites.map((site) => site.value.id),
    ...doc.channels.map((channel) => channel.value.id),
  ]);
  // A site's root channel has the site's id, so a new site takes an id free in both tables.
  const newSites = new Map(sites.map((site) => [site.value.id ?? nextSiteId(), site.value]));

  const listedRoots = new Set(
    doc.channels.filter(({ value }) => value.id === value.siteId).map(({ value }) => value.siteId),
  );
  const createdRoots = [...newSites].filter(([id]) => !listedRoots.has(id));
  const channelSites = new Map<number, number>();
  for (const channel of state.channels.values()) channelSites.set(channel.id, channel.siteId);
  for (const [id] of createdRoots) channelSites.set(id, id);
  for (const { value } of doc.channels) {
    if (value.id !== undefined && !channelSites.has(value.id)) channelSites.set(value.id, value.siteId);
  }

  const brokenSiteIds = brokenOnly(doc.brokenIds.sites, (id) => state.sites.has(id) || newSites.has(id));
  const channels = checkChannels(doc, state, problems, {
    newSites,
    brokenSiteIds,
    channelSiteOf: (id) => channelSites.get(id),
  });
  const validChannelIds = new Set(channels.map((channel) => channel.value.id));
  const brokenChannelIds = brokenOnly(
    doc.brokenIds.channels,
    (id) =>
      state.channels.has(id) || validChannelIds.has(id) || createdRoots.some(([rootId]) => rootId === id),
  );
  const nextChannelId = idCounter([state.maxIds.channels, ...channelSites.keys(), ...newSites.keys()]);
  const newChannels: ParsedChannel['value'][] = [
    ...createdRoots.map(([id, site]) => rootChannel(id, site)),
    ...channels.map(({ value }) => ({ ...value, id: value.id ?? nextChannelId() })),
  ];
  const refOf = new Map(channels.map((channel) => [channel.value.id, channel.ref]));

  const siteLevels = new Map<number, number>();
  for (const site of state.sites.values()) siteLevels.set(site.id, site.checkContentLevel);
  for (const [id, site] of newSites) {
    siteLevels.set(id, site.attributes.checkContentLevel ?? DEFAULT_SITE_ATTRIBUTES.checkContentLevel);
  }

  const plan: StructurePlan = {
    sites: [...newSites].map(([id, { attributes, ...site }]) => ({
      ...site,
      id,
      attributes: JSON.stringify(attributes),
    })),
    channels: [],
    rootChannelsCreated: createdRoots.length,
    channelUpdates: [],
    siteLevels,
    channelSites,
    brokenSiteIds,
    brokenChannelIds,
  };

  for (const siteId of new Set(newChannels.map((channel) => channel.siteId))) {
    const existing = [...state.channels.values()].filter((channel) => channel.siteId === siteId);
    const added = newChannels.filter((channel) => channel.siteId === siteId);
    const known = new Set([...existing, ...added].map((channel) => channel.id));
    // A parent with problems of its own is left out; its children count as attached until it is fixed.
    const links: ChannelLink[] = [
      ...existing,
      ...added.map((channel) => ({
        id: channel.id as number,
        parentId: known.has(channel.parentId ?? 0) ? (channel.parentId ?? 0) : 0,
      })),
    ];
    const looping = detachedChannels(links);
    for (const id of looping) {
      const ref = refOf.get(id);
      // Only the database's own channels have no record in the file: their tree is already broken.
      if (!ref) throw new Error(`channel ${id} of site ${siteId} does not reach the site's root channel`);
      problems.add(ref, `its parent chain loops instead of reaching the root channel of site ${siteId}`);
    }
    if (looping.length > 0 || problems.count > 0) continue;

    const tree = computeChannelTree(links);
    for (const channel of existing) {
      const fields = tree.get(channel.id);
      if (!fields) continue;
      const parentsPath = formatParentsPath(fields.parentsPath);
      if (
        parentsPath !== channel.parentsPath ||
        fields.parentsCount !== channel.parentsCount ||
        fields.childrenCount !== channel.childrenCount
      ) {
        plan.channelUpdates.push({ id: channel.id, ...fields, parentsPath });
      }
    }
    for (const { extras, guid, parentId, addDate, createdDate, lastModifiedDate, ...channel } of added) {
      const fields = tree.get(channel.id as number);
      plan.channels.push({
        ...channel,
        guid: guid ?? randomUUID(),
        parentId: parentId ?? 0,
        addDate: addDate ?? now,
        createdDate: createdDate ?? now,
        lastModifiedDate: lastModifiedDate ?? now,
        parentsPath: formatParentsPath(fields?.parentsPath ?? []),
        parentsCount: fields?.parentsCount ?? 0,
        childrenCount: fields?.childrenCount ?? 0,
        extras: JSON.stringify(extras),
      });
    }
  }
  return plan;
}
