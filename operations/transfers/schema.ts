import { z } from 'zod';
import { RESTORE_BEHAVIORS, TRANSFER_STATUSES, UNDO_HOURS } from '../../domain/transfers';
import type { StoredTransferSettings } from '../../db/transfers';
import type { Row } from '../../db/row';
import { iso, isoReq } from '../paging';
import { id, provider, timestamp, timestampOrNull } from '../schemas';

/** A transfer as the API answers it (the contract's fields, and who decided). */
export const transferRow = z.object({
  id: id(),
  object: z.literal('transfer'),
  status: z.enum(TRANSFER_STATUSES),
  from_app_user_id: z.string().describe('the app user who held the purchase'),
  to_app_user_id: z.string().describe('the app user who restored it'),
  provider,
  policy: z.enum(['transfer', 'review']).describe('the restore policy that made it'),
  is_sandbox: z.boolean(),
  created_at: timestamp,
  completed_at: timestampOrNull,
  decided_at: timestampOrNull.describe('when a person or the tenant approved or rejected it (review)'),
  undo_until: timestampOrNull.describe('until when an undo is allowed; null until the transfer completes'),
  undone_at: timestampOrNull,
});

export function renderTransfer(r: Row): z.infer<typeof transferRow> {
  return {
    id: String(r.id),
    object: 'transfer',
    status: r.status,
    from_app_user_id: r.from_app_user_id,
    to_app_user_id: r.to_app_user_id,
    provider: r.provider,
    policy: r.policy,
    is_sandbox: !!r.is_sandbox,
    created_at: isoReq(r.created_at),
    completed_at: iso(r.completed_at),
    decided_at: iso(r.decided_at),
    undo_until: iso(r.undo_until),
    undone_at: iso(r.undone_at),
  };
}

export const transferSettingsBody = z.object({
  object: z.literal('transfer_settings'),
  restore_behavior: z
    .enum(RESTORE_BEHAVIORS)
    .describe(
      'what a restore of a purchase another app user holds does: keep_with_original (refused, 409 purchase_token_reused), transfer (access moves at once), review (202: waits for approve or reject)',
    ),
  undo_hours: z
    .number()
    .describe(`how long a completed transfer can be undone, ${UNDO_HOURS.min}–${UNDO_HOURS.max} hours`),
  updated_at: timestampOrNull.describe('null: the defaults, never changed'),
});

export const renderTransferSettings = (s: StoredTransferSettings): z.infer<typeof transferSettingsBody> => ({
  object: 'transfer_settings',
  restore_behavior: s.restore_behavior,
  undo_hours: s.undo_hours,
  updated_at: s.updated_at,
});

export const transferIdInput = z.object({ id: z.string().describe('the transfer id') }).strict();
