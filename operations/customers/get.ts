import { z } from 'zod';
import {
  customerAttributes,
  customerEntitlements,
  customerExists,
  customerGrants,
  customerProvisional,
  customerTimeline,
  customerTransfersIn,
} from '../../db/customers';
import { aliasedIds } from '../../db/revenuecat';
import { MAX_ALIASES } from '../../domain/aliases';
import { transferredExplanation } from '../../domain/transfers';
import { iso, isoReq } from '../paging';
import { notFound } from '../errors';
import { pageOf, paging } from '../schemas';
import { defineOperation } from '../types';
import {
  appUserId,
  customerEntitlement,
  grantAsEntitlement,
  paidEntitlement,
  provisionalAsEntitlement,
  timelineEntry,
  timelineRow,
} from './schema';

/**
 * One customer's whole story for the support desk (docs/support.md): every entitlement, paid or
 * granted, with why it is in its state (the workflow's own rules: domain/entitlement-why.ts), and
 * the timeline of what happened to them, newest first and paged like every list.
 */
export const getCustomer = defineOperation({
  name: 'customers.get',
  summary: 'One app user: entitlements with why they hold (or lack) access, and their timeline, newest first',
  scope: 'customers:read',
  write: false,
  input: z.object({ app_user_id: appUserId, ...paging }).strict(),
  output: z.object({
    object: z.literal('customer'),
    app_user_id: z.string(),
    is_premium: z.boolean().describe('what the SDK is answered: paid, granted or provisional access'),
    entitlements: z.array(customerEntitlement),
    attributes: z
      .array(z.object({ name: z.string(), value: z.string(), updated_at: z.string() }))
      .describe('what the app set on the user (RevenueCat’s setAttributes), by name; never used for access'),
    known_as: z
      .array(z.string())
      .describe(
        'the other ids of this customer (an anonymous id that signed in as them, or a merge by your backend): the app is answered the same for each, and the entitlements above include theirs (docs: transfers)',
      ),
    timeline: pageOf(timelineEntry),
  }),
  rest: { method: 'GET', path: '/customers/{app_user_id}' },
  fuzzModelled: false,
  errors: [404],
  pages: [{ page: '/customers', gates: ['open'] }],
  tool: {
    name: 'billing_customer',
    title: 'Customer',
    description:
      'One app user: each entitlement (paid or granted) with why it is in its state, and the timeline newest first (paged).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx, input) {
    const now = new Date().toISOString();
    return ctx.read(async (reader) => {
      if (!(await customerExists(reader, input.app_user_id))) throw notFound('customer');
      // Access is the customer's under every id they are known by (docs/transfers.md, aliases), as
      // the SDK is answered; the timeline and attributes are this id's own.
      const { ids } = await aliasedIds(reader, input.app_user_id, MAX_ALIASES);
      const everyId = async <T>(read: (id: string) => Promise<T[]>) => {
        const all: T[] = [];
        for (const id of ids) all.push(...(await read(id))); // one reader: one statement at a time
        return all;
      };
      const [paid, grants, provisional, attributes, timeline, transfersIn] = [
        await everyId((id) => customerEntitlements(reader, id)),
        await everyId((id) => customerGrants(reader, id)),
        await everyId((id) => customerProvisional(reader, id)),
        await customerAttributes(reader, input.app_user_id),
        await customerTimeline(reader, ctx.tenantId, input.app_user_id, input),
        await everyId((id) => customerTransfersIn(reader, id)),
      ];
      // Access a restore moved here: the why names the transfer ("premium since the transfer from …").
      const movedHere = new Map<string, (typeof transfersIn)[number]>();
      for (const t of transfersIn)
        for (const id of (t.entitlement_ids ?? []) as string[]) if (!movedHere.has(id)) movedHere.set(id, t);
      const withTransfer = (e: ReturnType<typeof paidEntitlement>) => {
        const t = movedHere.get(e.id);
        if (!t) return e;
        const at = isoReq(t.completed_at);
        return {
          ...e,
          why: {
            ...e.why,
            explanation: `${transferredExplanation(t.from_app_user_id, at)} ${e.why.explanation}`,
            transfer: { id: t.id, from_app_user_id: t.from_app_user_id, at, undo_until: iso(t.undo_until) },
          },
        };
      };
      const entitlements = [
        ...grants.map((g) => grantAsEntitlement(ctx.tenantId, g)),
        ...paid.map((r) => withTransfer(paidEntitlement(ctx.tenantId, r, now))),
        // Not yet confirmed by the workflow (docs/provisional-access.md): counting, unconfirmed or withdrawn.
        ...provisional.map((r) => provisionalAsEntitlement(r, now)),
      ];
      return {
        object: 'customer' as const,
        app_user_id: input.app_user_id,
        is_premium: entitlements.some((e) => e.is_active),
        entitlements,
        attributes: attributes.map((a) => ({ name: a.name, value: a.value, updated_at: a.updated_at })),
        known_as: ids.filter((id) => id !== input.app_user_id),
        timeline: { ...timeline, data: timeline.data.map((r) => timelineRow(ctx.tenantId, r)) },
      };
    });
  },
});
