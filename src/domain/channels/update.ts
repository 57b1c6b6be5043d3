import type { Db } from '../../db/client.ts';
import type { Channel } from '../../db/models.ts';
import { writeTransaction } from '../../db/transaction.ts';
import type { components } from '../../generated/openapi.ts';
import { resolveAlias } from '../aliases.ts';
import { assertNoProblems, conflict, type FieldProblem, notFound } from '../errors.ts';
import type { Actor } from '../events/actor.ts';
import { recordEvent } from '../events/record.ts';
import { joinList } from '../lists.ts';
import { requireSite } from '../records.ts';
import { pathSegmentProblem, urlProblem } from '../safeText.ts';
import { type Precondition, refuseUnlessMissing, versionFilter } from '../versions.ts';
import type { ChannelFormA } from './forms.ts';
import { filePathProblem } from './paths.ts';
import { channelWithChildren } from './read.ts';

export type UpdateChannelRequest = components['schemas']['UpdateChannelRequest'];

const TEXT_FIELDS = ['content', 'linkType', 'description'] as const;
const PATH_FIELDS = ['filePath', 'channelFilePathRule', 'contentFilePathRule'] as const;
const URL_FIELDS = [
  ['imageUrl', 'resource'],
  ['linkUrl', 'link'],
] as const;
const TEMPLATE_FIELDS = ['channelTemplateId', 'contentTemplateId'] as const;

/** The column changes an update asks for; a create (./create.ts) reads its body by the same rules. */
export function channelChanges(body: UpdateChannelRequest): Partial<Channel> {
  const problems: FieldProblem[] = [];
  const changes: Partial<Channel> = {};
  if (body.channelName !== undefined) {
    if (body.channelName.trim() === '') problems.push({ field: 'channelName', message: 'must not be empty' });
    else changes.channelName = body.channelName.trim();
  }
  const indexName = resolveAlias(
    { field: 'indexName', value: body.indexName },
    { field: 'channelIndex', value: body.channelIndex },
    problems,
  );
  if (indexName !== undefined) {
    const trimmed = indexName.trim();
    const problem = trimmed === '' ? undefined : pathSegmentProblem(trimmed);
    if (problem)
      problems.push({ field: body.indexName === undefined ? 'channelIndex' : 'indexName', message: problem });
    else changes.indexName = trimmed === '' ? null : trimmed;
  }
  for (const field of PATH_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const problem = filePathProblem(value);
    if (problem) problems.push({ field, message: problem });
    else changes[field] = value;
  }
  for (const field of TEXT_FIELDS) if (body[field] !== undefined) changes[field] = body[field];
  for (const [field, kind] of URL_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const problem = urlProblem(value, kind);
    if (problem) problems.push({ field, message: problem });
    else changes[field] = value;
  }
  if (body.keywords !== undefined) changes.keywords = joinList(body.keywords);
  if (body.groupNames !== undefined) changes.groupNames = joinList(body.groupNames);
  for (const field of TEMPLATE_FIELDS) if (body[field] !== undefined) changes[field] = body[field];
  assertNoProblems(problems);
  return changes;
}

/** indexName is unique within a site: a clash is a conflict naming the channel that holds it. */
export async function assertIndexNameFree(
  tx: Pick<Db, 'channel'>,
  siteId: number,
  indexName: string,
  exceptId = 0,
): Promise<void> {
  const holder = await tx.channel.findFirst({
    where: { siteId, indexName, id: { not: exceptId } },
    select: { id: true },
  });
  if (holder) {
    throw conflict(`indexName '${indexName}' is already used by channel ${holder.id} of site ${siteId}`, [
      { field: 'indexName', message: 'must be unique within the site' },
    ]);
  }
}

/**
 * Apply a partial update of a channel's own fields; tree fields are never taken from input. With a
 * precondition (If-Match) the UPDATE requires the version it names: a stale one writes nothing.
 */
export async function updateChannel(
  db: Db,
  target: { siteId: number; channelId: number },
  body: UpdateChannelRequest,
  actor: Actor,
  precondition?: Precondition,
): Promise<{ channel: ChannelFormA; version: number }> {
  const site = await requireSite(db, target.siteId);
  const changes = channelChanges(body);
  const updated = await writeTransaction(db, async (tx) => {
    const channel = await tx.channel.findFirst({ where: { id: target.channelId, siteId: target.siteId } });
    if (!channel) return null;
    if (changes.indexName) await assertIndexNameFree(tx, site.id, changes.indexName, channel.id);
    const { count } = await tx.channel.updateMany({
      where: { id: channel.id, ...versionFilter(precondition) },
      data: { ...changes, lastModifiedDate: new Date(), version: { increment: 1 } },
    });
    if (count === 0)
      return refuseUnlessMissing(`Channel ${channel.id}`, precondition, () =>
        tx.channel.findUnique({ where: { id: channel.id }, select: { version: true } }),
      );
    await recordEvent(tx, {
      actor,
      type: 'channel.updated',
      resourceId: channel.id,
      siteId: channel.siteId,
      channelId: channel.id,
      payload: changes,
    });
    return tx.channel.findUnique({ where: { id: channel.id } });
  });
  if (!updated) throw notFound(`Channel ${target.channelId} does not exist in site ${target.siteId}`);
  return { channel: await channelWithChildren(db, site, updated), version: updated.version };
}
