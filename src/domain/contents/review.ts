import type { components } from '../../generated/openapi.ts';
import { invalid } from '../errors.ts';

/*
 * Review state (docs/design-decisions.md, "Review state"): checkedLevel −99 is a draft, 0 pending, 1…5 passed that
 * stage, −1…−5 rejected at that stage. A content is `checked` exactly when its level reaches the
 * site's checkContentLevel.
 */

export const DRAFT_LEVEL = -99;

export interface ReviewState {
  checked: boolean;
  checkedLevel: number;
}

/** The contract's review codes (CheckedLevel). */
export type CheckedLevel = components['schemas']['CheckedLevel'];

export function isValidCheckedLevel(level: number): level is CheckedLevel {
  return level === DRAFT_LEVEL || (Number.isInteger(level) && level >= -5 && level <= 5);
}

/**
 * A stored level as the contract's code. Every write checks the level, so a stored one is always
 * valid; a row written by hand outside the service reads as pending rather than breaking the read.
 */
export function storedCheckedLevel(level: number): CheckedLevel {
  return isValidCheckedLevel(level) ? level : 0;
}

export function reviewStateOfLevel(checkedLevel: number, siteLevel: number): ReviewState {
  if (!isValidCheckedLevel(checkedLevel)) {
    throw invalid(`checkedLevel must be -99 (draft), 0 (pending), 1 to 5 (passed) or -1 to -5 (rejected)`, [
      { field: 'checkedLevel', message: 'must be -99 or an integer from -5 to 5' },
    ]);
  }
  return { checked: checkedLevel >= siteLevel, checkedLevel };
}

/** The state an explicit approval (true) or withdrawal (false) leads to. */
export function reviewStateOfDecision(approved: boolean, siteLevel: number): ReviewState {
  return approved ? { checked: true, checkedLevel: siteLevel } : { checked: false, checkedLevel: 0 };
}

/**
 * The state an update asks for: `checkedLevel` and/or an approval word. When both are sent they must
 * agree, since either alone decides the state. Undefined when the update does not touch review state.
 */
export function requestedReviewState(
  update: { checkedLevel?: number | undefined; approved?: boolean | undefined },
  siteLevel: number,
): ReviewState | undefined {
  const byLevel =
    update.checkedLevel === undefined ? undefined : reviewStateOfLevel(update.checkedLevel, siteLevel);
  const byDecision =
    update.approved === undefined ? undefined : reviewStateOfDecision(update.approved, siteLevel);
  if (byLevel && byDecision && byLevel.checked !== byDecision.checked) {
    throw invalid(
      `isChecked ${update.approved} contradicts checkedLevel ${update.checkedLevel} (the site approves at level ${siteLevel})`,
      [{ field: 'isChecked', message: 'contradicts checkedLevel' }],
    );
  }
  return byLevel ?? byDecision;
}

/** How many review stages a content has passed: its level when positive, none otherwise. */
export function passedStages(level: number): number {
  return level > 0 ? level : 0;
}

/** The level an approval up to `stage` leads to: a content already past that stage keeps its own. */
export function approvedLevel(level: number, stage: number): number {
  return Math.max(passedStages(level), stage);
}

/**
 * The level a rejection leads to: rejected at the stage the content was waiting for (one past those
 * it passed, the site's last for an approved one); an already rejected content keeps its code.
 */
export function rejectedLevel(level: number, siteLevel: number): number {
  if (level < 0 && level !== DRAFT_LEVEL) return level;
  return -Math.min(passedStages(level) + 1, siteLevel);
}
