import { describe, expect, it } from 'vitest';
import { ENTITLEMENT_STATES } from '../../domain/entitlement';
import { WEBHOOK_DELIVERY_STATUSES } from '../../domain/events';
import { MODES, PROVIDERS } from '../../domain/providers';
import { ROLES } from '../../domain/roles';
import { SUBSCRIPTION_STATUSES } from '../../domain/subscription';
import { CHANGE_STATUSES } from '../../domain/changes';
import { SIGNING_KEY_STATES } from '../../domain/signing-keys';
import { testDb } from '../helpers/db';

/**
 * The migration spells the vocabularies as SQL check constraints (a migration is frozen history
 * and must not change when code does); this proves they still equal the domain lists.
 */

async function allowedValues(table: string, column: string): Promise<string[][]> {
  const { rows } = await testDb().raw(
    `select pg_get_constraintdef(c.oid) as def
       from pg_constraint c
       join pg_class t on t.oid = c.conrelid
      where c.contype = 'c' and t.relname = ? and pg_get_constraintdef(c.oid) ~ ('\\m' || ? || '\\M')`,
    [table, column],
  );
  // e.g. CHECK ((status = ANY (ARRAY['trialing'::text, 'active'::text, ...])))
  return rows.map((r: { def: string }) => [...r.def.matchAll(/'([^']*)'::text/g)].map((m) => m[1]).sort());
}

const sorted = (xs: readonly string[]) => [...xs].sort();

describe('check constraints equal the domain vocabularies', () => {
  it('subscriptions.status = SUBSCRIPTION_STATUSES', async () => {
    expect(await allowedValues('subscriptions', 'status')).toEqual([sorted(SUBSCRIPTION_STATUSES)]);
  });
  it('entitlements.state = ENTITLEMENT_STATES', async () => {
    expect(await allowedValues('entitlements', 'state')).toEqual([sorted(ENTITLEMENT_STATES)]);
  });
  it('webhook_deliveries.status = WEBHOOK_DELIVERY_STATUSES', async () => {
    expect(await allowedValues('webhook_deliveries', 'status')).toEqual([sorted(WEBHOOK_DELIVERY_STATUSES)]);
  });
  it('a member’s and an invitation’s role = ROLES', async () => {
    expect(await allowedValues('dashboard_users', 'role')).toEqual([sorted(ROLES)]);
    expect(await allowedValues('team_invitations', 'role')).toEqual([sorted(ROLES)]);
  });
  it('held_changes.status = CHANGE_STATUSES', async () => {
    expect(await allowedValues('held_changes', 'status')).toEqual([sorted(CHANGE_STATUSES)]);
  });
  it('signing_keys.state = SIGNING_KEY_STATES (the other check on state: only the active key keeps its private half)', async () => {
    expect(await allowedValues('signing_keys', 'state')).toEqual(
      expect.arrayContaining([sorted(SIGNING_KEY_STATES), ['active']]),
    );
  });
  it('every provider column = PROVIDERS, every mode column = MODES', async () => {
    const { rows } = await testDb().raw(
      `select t.relname as table, a.attname as column
         from pg_attribute a join pg_class t on t.oid = a.attrelid join pg_namespace n on n.oid = t.relnamespace
        where n.nspname = 'public' and t.relkind = 'r' and a.attname in ('provider', 'mode') and not a.attisdropped`,
    );
    expect(rows.length).toBeGreaterThan(3);
    for (const { table, column } of rows as { table: string; column: string }[]) {
      const expected = column === 'provider' ? sorted(PROVIDERS) : sorted(MODES);
      expect([table, column, await allowedValues(table, column)]).toEqual([table, column, [expected]]);
    }
  });
});
