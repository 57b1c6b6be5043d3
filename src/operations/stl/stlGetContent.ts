import { getStlContent } from '../../domain/stl/contents.ts';
import type { Handler } from '../types.ts';

export const stlGetContent: Handler<'stlGetContent'> = async ({ query }, services) => ({
  value: await getStlContent(services, query),
});
