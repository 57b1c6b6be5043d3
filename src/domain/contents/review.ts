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
