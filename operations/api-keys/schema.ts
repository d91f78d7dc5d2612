import { z } from 'zod';
import { isUuid } from '../../domain/ids';
import { ApiError } from '../errors';
import { id } from '../schemas';

/** The longest expiry a person may give a new secret key, in days (about ten years). */
export const MAX_KEY_EXPIRY_DAYS = 3650;

/** A secret key as the dashboard's operations answer it: names and dates, never its hash. */
export const apiKeyRow = z.object({
  id: id(),
  object: z.literal('api_key'),
  name: z.string(),
  scopes: z.array(z.string()),
});

/** A malformed id, a missing key and another tenant's key are the same refusal. */
export const noSuchKey = () => new ApiError(404, 'not_found', 'No such key.');
export const knownKeyId = (v: string) => {
  if (!isUuid(v)) throw noSuchKey();
  return v;
};
