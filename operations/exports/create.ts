import crypto from 'node:crypto';
import { z } from 'zod';
import { createExport, finishExport } from '../../db/exports';
import { EXPORT_FORMATS } from '../../domain/export-schema';
import { exportRunWorkflowId, startExportRun } from '../../temporal/workflow-starts';
import { ApiError, serverMisconfigured } from '../errors';
import { defineOperation } from '../types';
import { exportAccepted } from './schema';

const since = z
  .string()
  .refine((s) => /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: 'since must be an ISO 8601 date or timestamp',
  })
  .describe('only rows changed at or after this instant (ISO 8601); absent: everything');

/**
 * Start an export of the tenant's data (docs/exports.md): one file per table in Parquet or CSV,
 * written by the `export-<tenant>-<id>` workflow and downloaded from this API. One export runs
 * per tenant at a time.
 */
export const createExportOp = defineOperation({
  name: 'exports.create',
  summary: 'Export the tenant’s data: one Parquet or CSV file per table, all rows or those changed since a time',
  scope: 'exports:write',
  write: true,
  input: z.object({ format: z.enum(EXPORT_FORMATS), since: since.optional() }).strict(),
  output: exportAccepted,
  rest: { method: 'POST', path: '/exports' },
  fuzzModelled: false,
  errors: [409, 503],
  responses: {
    202: { description: 'Accepted: the export runs; follow it with GET /exports/{id}', schema: exportAccepted },
  },
  tool: {
    name: 'billing_export',
    title: 'Export',
    description:
      'Start an export of this account’s data (subscriptions, entitlements, grants, events with their hashes, customers): format parquet or csv, optionally only rows changed since an ISO time. Follow it with billing_export_status.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(ctx, input) {
    if (!ctx.services.temporal) throw serverMisconfigured('TEMPORAL_ADDRESS');
    const id = crypto.randomUUID();
    const row = await ctx.tx((trx) =>
      createExport(trx, {
        id,
        tenantId: ctx.tenantId,
        format: input.format,
        since: input.since ? new Date(input.since).toISOString() : null,
        workflowId: exportRunWorkflowId(ctx.tenantId, id),
      }),
    );
    if (!row)
      throw new ApiError(
        409,
        'export_running',
        'An export of this account is running already; wait for it to finish.',
        {
          param: 'format',
        },
      );
    try {
      await startExportRun(ctx.services.temporal.client, ctx.services.config.taskQueue, {
        tenantId: ctx.tenantId,
        exportId: id,
      });
    } catch (err) {
      await ctx.tx((trx) => finishExport(trx, id, 'failed', 'The export could not be started; start another.'));
      throw err;
    }
    ctx.response.status = 202;
    return { id, status: 'running' as const };
  },
});
