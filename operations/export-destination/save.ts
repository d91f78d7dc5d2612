import { z } from 'zod';
import { getDestination, lastRuns, saveDestination } from '../../db/export-destinations';
import { endpointRefusal, isBucketName, normalPrefix } from '../../domain/export-destination';
import { EXPORT_FORMATS } from '../../domain/export-schema';
import { invalidRequest } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { destinationBody, renderDestination } from './schema';

/**
 * Sets where scheduled exports go (docs/exports.md, "Scheduled exports to your bucket"). Only a
 * person on the dashboard may: the access key id and secret are sealed by the vault and never
 * shown back; left empty, the stored ones stay. Saving again resumes a stopped destination.
 */
export const saveExportDestination = defineOperation({
  name: 'export_destination.save',
  summary: 'Set the storage scheduled exports upload to, with its credentials (sealed, never shown back)',
  scope: ACCOUNT,
  accountArea: 'credentials',
  write: true,
  input: z
    .object({
      endpoint: z.string().max(300),
      region: z.string().min(1).max(64),
      bucket: z.string().max(63),
      prefix: z.string().max(200).default(''),
      format: z.enum(EXPORT_FORMATS).default('parquet'),
      access_key_id: z.string().max(256).optional(),
      secret_access_key: z.string().max(256).optional(),
    })
    .strict(),
  output: destinationBody,
  pages: [{ page: '/settings/exports', gates: ['act'] }],
  async handler(ctx, input) {
    const refusal = endpointRefusal(input.endpoint);
    if (refusal) throw invalidRequest(refusal, 'endpoint');
    if (!isBucketName(input.bucket))
      throw invalidRequest('The bucket name must be 3–63 lower-case letters, digits, dots or hyphens.', 'bucket');
    const prefix = normalPrefix(input.prefix);
    if (prefix === null)
      throw invalidRequest("The prefix must be a folder path of letters, digits and / - _ . ! * ' ( ) =.", 'prefix');
    const keyId = input.access_key_id?.trim() ?? '';
    const secret = input.secret_access_key ?? '';
    if (Boolean(keyId) !== Boolean(secret))
      throw invalidRequest(
        'Give both the access key id and its secret, or neither to keep the stored ones.',
        keyId ? 'secret_access_key' : 'access_key_id',
      );
    return ctx.tx(async (trx) => {
      if (!keyId && !(await getDestination(trx)))
        throw invalidRequest('The access key id and its secret are needed the first time.', 'access_key_id');
      const d = await saveDestination(
        trx,
        ctx.services.vault,
        ctx.tenantId,
        {
          endpoint: input.endpoint.replace(/\/$/, ''),
          region: input.region,
          bucket: input.bucket,
          prefix,
          format: input.format,
        },
        keyId ? { access_key_id: keyId, secret_access_key: secret } : null,
      );
      return renderDestination(d, await lastRuns(trx, 10));
    });
  },
});
