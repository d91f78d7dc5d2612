import type { Knex } from 'knex';

/**
 * Which tenants stored a delivery of each (provider, event id): what `lifecycle:upgrade`
 * (temporal/lifecycle-upgrade.ts) checks every event of an old customer workflow against. One
 * statement for all of them (run as the owner, across tenants); refusals (`unverified_…` ids)
 * never match an event. Keyed `provider\0event id`; an event with no delivery row is absent.
 */
export async function tenantsOfDeliveries(db: Knex, events: { provider: string; eventId: string }[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  if (!events.length) return out;
  const { rows } = await db.raw(
    `select d.provider, d.event_id, d.tenant_id
       from webhook_deliveries d
       join unnest(?::text[], ?::text[]) as e(provider, event_id) on d.provider = e.provider and d.event_id = e.event_id
      where d.event_type <> 'unverified' and d.tenant_id is not null`,
    [events.map((e) => e.provider), events.map((e) => e.eventId)],
  );
  for (const r of rows as { provider: string; event_id: string; tenant_id: string }[]) {
    const key = deliveryKey(r.provider, r.event_id);
    if (!out.has(key)) out.set(key, new Set());
    out.get(key)!.add(r.tenant_id);
  }
  return out;
}

export const deliveryKey = (provider: string, eventId: string) => `${provider}\u0000${eventId}`;
