import { z } from 'zod';
import { provider } from '../schemas';

/**
 * What every view of a provider connection shows: which provider, its name and markers, and
 * whether each secret is present (flags only, never a value). The API's list and the
 * dashboard's account operations add their own fields.
 */
export const connectionFacts = z.object({
  provider,
  label: z.string(),
  is_default: z.boolean(),
  is_active: z.boolean(),
  has_test_credential: z.boolean(),
  has_live_credential: z.boolean(),
  has_webhook_secret: z.boolean(),
});
