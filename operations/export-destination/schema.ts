import { z } from 'zod';
import { DESTINATION_STATUSES } from '../../domain/export-destination';
import { EXPORT_FORMATS } from '../../domain/export-schema';
import type { Row } from '../../db/row';

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v ? String(v) : null);

/** The destination as anyone who reads exports sees it: never its credentials. */
export const destinationBody = z.object({
  destination: z
    .object({
      endpoint: z.string(),
      region: z.string(),
      bucket: z.string(),
      prefix: z.string(),
      format: z.enum(EXPORT_FORMATS),
      status: z.enum(DESTINATION_STATUSES),
      failures: z.number().int(),
      last_error: z.string().nullable(),
      updated_at: z.string(),
    })
    .nullable(),
  runs: z.array(
    z.object({
      run: z.number().int(),
      status: z.enum(['running', 'succeeded', 'failed']),
      window_start: z.string().nullable(),
      window_end: z.string(),
      error: z.string().nullable(),
      finished_at: z.string().nullable(),
    }),
  ),
});

export function renderDestination(d: Row | undefined, runs: Row[]): z.infer<typeof destinationBody> {
  return {
    destination: d
      ? {
          endpoint: d.endpoint as string,
          region: d.region as string,
          bucket: d.bucket as string,
          prefix: d.prefix as string,
          format: d.format as 'parquet' | 'csv',
          status: d.status as 'active' | 'stopped',
          failures: Number(d.failures),
          last_error: (d.last_error as string | null) ?? null,
          updated_at: iso(d.updated_at)!,
        }
      : null,
    runs: runs.map((r) => ({
      run: Number(r.seq),
      status: r.status as 'running' | 'succeeded' | 'failed',
      window_start: iso(r.window_start),
      window_end: iso(r.window_end)!,
      error: (r.error as string | null) ?? null,
      finished_at: iso(r.finished_at),
    })),
  };
}
