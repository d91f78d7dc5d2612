import { z } from 'zod';
import type { HeldChangeRow } from '../../db/held-changes';
import { CHANGE_STATUSES, changeDashboardUrl, shownInput } from '../../domain/changes';
import { isUuid } from '../../domain/ids';
import { ApiError } from '../errors';
import { iso, isoReq } from '../paging';
import { id } from '../schemas';

/** A held write as every surface answers it (docs/approvals.md): its plan, status and outcome. */
export const changeBody = z.object({
  id: id('the change'),
  object: z.literal('change'),
  status: z.enum(CHANGE_STATUSES),
  operation: z.string().describe('the write that waits, by its operation name (e.g. products.update)'),
  url: z.string().describe('where a person approves or rejects it, in the dashboard'),
  input: z.record(z.string(), z.unknown()).describe('the validated input the write will run with'),
  plan: z.object({
    summary: z.string(),
    targets: z.array(z.string()).describe('`catalogue` (this service) and/or the providers the write calls'),
    before: z.record(z.string(), z.unknown()).nullable().describe('the current values it changes, when there are some'),
  }),
  requested_by_key: id('the key that asked; null when an assistant did').nullable(),
  requested_by_assistant: z
    .string()
    .nullable()
    .describe('the connected assistant that asked (its id on the Assistants page); null when a key did'),
  created_at: z.string(),
  expires_at: z.string(),
  decided_at: z.string().nullable(),
  outcome: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('how it ended: the write’s identifying fields, or why nothing was written'),
});

export function serializeChange(row: HeldChangeRow, dashboardRoot: string): z.infer<typeof changeBody> {
  return {
    id: row.id,
    object: 'change',
    status: row.status,
    operation: row.operation,
    url: changeDashboardUrl(dashboardRoot, row.id),
    input: shownInput(row.input),
    plan: { summary: row.plan.summary, targets: row.plan.targets, before: row.plan.before ?? null },
    requested_by_key: row.requested_by_key,
    requested_by_assistant: row.requested_by_assistant,
    created_at: isoReq(row.created_at),
    expires_at: isoReq(row.expires_at),
    decided_at: iso(row.decided_at),
    outcome: row.outcome,
  };
}

/** A malformed id, a missing change and another tenant's change are the same refusal. */
export const noSuchChange = () => new ApiError(404, 'not_found', 'No such change.');
export const knownChangeId = (v: string) => {
  if (!isUuid(v)) throw noSuchChange();
  return v;
};
