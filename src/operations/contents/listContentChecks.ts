import { listContentChecks as decisionsOf } from '../../domain/contents/check.ts';
import type { Handler } from '../types.ts';

export const listContentChecks: Handler<'listContentChecks'> = async ({ path }, { db }) => ({
  value: await decisionsOf(db, path),
});
