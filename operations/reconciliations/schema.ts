import { z } from 'zod';
import { PROVIDERS, STORE_PROVIDERS } from '../../domain/providers';
import { STORE_REREAD_SKIPS } from '../../domain/store-purchase';
import { iso, isoReq } from '../paging';
import { provider, timestamp, timestampOrNull } from '../schemas';

/** The facts compared, on either side: no personal data. */
const state = z.object({ status: z.string(), current_period_end: timestampOrNull });

export const repairRow = z.object({
  id: z.string(),
  object: z.literal('reconciliation'),
  run_id: z.string().describe('the run that found the difference (a refresh, or a scheduled run)'),
  provider,
  subscription_id: z.string().describe("the provider's subscription id"),
  app_user_id: z.string().nullable(),
  held: state.nullable().describe('what the service held before the repair; null: it held nothing'),
  provider_state: state.extend({ cancel_at: timestampOrNull }).describe('what the provider said'),
  applied: z
    .array(z.object({ id: z.string(), kind: z.string() }))
    .describe(
      "the lifecycle events handed to the customer's workflow, tagged reconciliation; for a store purchase, the state the store's answer was written as",
    ),
  created_at: timestamp,
});

export const refreshBody = z.object({
  object: z.literal('customer_refresh'),
  app_user_id: z.string(),
  run_id: z.string(),
  providers: z.array(z.enum(PROVIDERS)).describe('the providers re-read'),
  compared: z.number().int().describe('subscriptions of the customer the service held or a provider named'),
  repairs: z.array(repairRow).describe('what differed and what was applied; empty: nothing differed'),
  skipped: z
    .array(
      z.object({
        provider: z.enum(STORE_PROVIDERS),
        subscription_id: z.string().describe("the purchase's id as the subscriptions list shows it"),
        reason: z
          .enum(STORE_REREAD_SKIPS)
          .describe(
            'token_not_kept: a Play purchase registered before its token was kept (register it again to keep it); token_unreadable: its kept token cannot be opened; no_connection: no proven connection to the store; not_found_at_store: the store does not know it',
          ),
      }),
    )
    .describe('store purchases held for the customer that could not be re-read'),
});

type Json = Record<string, unknown>;
const parsed = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as Json | null;
const stateOf = (v: Json | null) =>
  v ? { status: String(v.status), current_period_end: iso(v.current_period_end as string | null) } : null;

/** One stored repair as the API shows it. */
export function renderRepair(r: Record<string, unknown>): z.infer<typeof repairRow> {
  const ps = parsed(r.provider_state)!;
  return {
    id: String(r.id),
    object: 'reconciliation',
    run_id: String(r.run_id),
    provider: r.provider as z.infer<typeof provider>,
    subscription_id: String(r.subscription_external_id),
    app_user_id: (r.app_user_id as string | null) ?? null,
    held: stateOf(parsed(r.held)),
    provider_state: { ...stateOf(ps)!, cancel_at: iso(ps.cancel_at as string | null) },
    applied: (parsed(r.applied) as unknown as { id: string; kind: string }[]).map((a) => ({ id: a.id, kind: a.kind })),
    created_at: isoReq(r.created_at as string),
  };
}

/** A tenant's scheduled reconciliation (docs/reconciliation.md, "Scheduled"). */
export const settingsBody = z.object({
  object: z.literal('reconciliation_settings'),
  enabled: z.boolean().describe('false: the scheduled runs are paused (the on-demand refresh still works)'),
  web_interval_minutes: z.number().int().describe('minutes between runs over psp_a, psp_b and psp_c'),
  stores_interval_minutes: z.number().int().describe('minutes between runs over store_android and store_ios'),
  updated_at: timestampOrNull.describe('null: the defaults, never changed'),
});

export function renderSettings(s: {
  enabled: boolean;
  web_interval_minutes: number;
  stores_interval_minutes: number;
  updated_at: Date | string | null;
}): z.infer<typeof settingsBody> {
  return {
    object: 'reconciliation_settings',
    enabled: s.enabled,
    web_interval_minutes: s.web_interval_minutes,
    stores_interval_minutes: s.stores_interval_minutes,
    updated_at: iso(s.updated_at),
  };
}
