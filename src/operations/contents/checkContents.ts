import { checkContents as decide } from '../../domain/contents/check.ts';
import type { Handler } from '../types.ts';

export const checkContents: Handler<'checkContents'> = async ({ body, principal }, { db }) => ({
  value: await decide(db, body, principal),
});
