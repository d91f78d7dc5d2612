import { z } from 'zod';
import type { Row } from '../../db/row';
import { iso } from '../paging';

export const appRow = z.object({
  id: z.string(),
  object: z.literal('app'),
  name: z.string(),
  publishable_key_test: z.string().describe('for client apps in test mode (not a management credential)'),
  publishable_key_live: z.string(),
  created_at: z.string().nullable(),
});
export const app = (r: Row) => ({
  id: r.id,
  object: 'app' as const,
  name: r.name,
  publishable_key_test: r.publishable_key_test,
  publishable_key_live: r.publishable_key_live,
  created_at: iso(r.created_at),
});
