import { countHit, readHits } from '../../domain/contents/hits.ts';
import type { Handler } from '../types.ts';

export const stlCountHits: Handler<'stlCountHits'> = async ({ body }, { db, provider }) => ({
  value: await (body.autoIncrease === false ? readHits(db, body) : countHit({ db, provider }, body)),
});
