import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { takeDrainLock } from '../../db/sync-runs';
import { saveDraft } from '../../db/paywalls';
import { insertHeldChange } from '../../db/held-changes';
import { withTenant } from '../../db/tenant-tx';
import { ROLES, type Role } from '../../domain/roles';
import { OPERATIONS } from '../../operations';
import type { UserActor } from '../../operations/actor';
import { executeOperation } from '../../operations/execute';
import type { Services } from '../../operations/services';
import type { Operation } from '../../operations/types';
import { createLogger } from '../../runtime/logger';
import { testDb } from '../helpers/db';
import { makeApiKey, makeProduct, makeSubscription } from '../helpers/factories';
import { newTenant, testServices } from '../helpers/api';

/**
 * The reads only dashboard pages run (docs/architecture.md, "The surfaces and db/"): each is an
 * operation with the policy of every operation, so another tenant's person reads none of this
 * tenant's rows, and each role runs exactly what its role carries (the page gate aside).
 */
const READS = [
  'products.summaries',
  'customers.find',
  'sync.runs',
  'paywall.draft',
  'providers.connections',
  'providers.connection',
  'outbound_deliveries.recent_attempts',
  'audit.people',
  'changes.list',
  'changes.view',
  'api_keys.list',
  'team.list',
  'overview.get',
] as const;
const op = (name: string) => OPERATIONS.find((o) => o.name === name) as Operation;

describe('the dashboard pages’ own reads', () => {
  let services: Services;
  const log = createLogger('silent');
  const run = (name: string, actor: UserActor, input: Record<string, unknown> = {}) =>
    executeOperation(op(name), actor, input, { requestId: crypto.randomUUID(), services, log, surface: 'dashboard' });
  let a: { tenant: string; member: string; change: string; connection: string; email: string; key: string };
  let b: { tenant: string; member: string };
  const person = (tenantId: string, userId: string, role: Role = 'owner'): UserActor => ({
    kind: 'user',
    tenantId,
    userId,
    role,
  });
  const member = async (tenantId: string) =>
    (
      await testDb()('dashboard_users')
        .insert({ tenant_id: tenantId, email: `m-${crypto.randomUUID()}@example.test`, password_hash: 'x' })
        .returning('id')
    )[0].id as string;

  beforeAll(async () => {
    services = testServices();
    const ta = (await newTenant('reads-a')).tenant_id;
    const tb = (await newTenant('reads-b')).tenant_id;
    const email = `buyer-${crypto.randomUUID()}@example.test`;
    await makeProduct(ta, { prices: [{ country: 'US', currency: 'USD', amount: 999 }] });
    const sub = await makeSubscription(ta, { appUserId: `user-${crypto.randomUUID()}` });
    await testDb()('subscriptions').where({ id: sub.id }).update({ email });
    const key = await makeApiKey(ta, ['products:write'], { name: 'asks first', requireApproval: true });
    const { change, connection } = await withTenant(testDb(), ta, async (trx) => {
      await takeDrainLock(trx, {
        runId: crypto.randomUUID(),
        tenantId: ta,
        kind: 'sync',
        confirmCount: 0,
        requestedBy: null,
        workflowId: `sync-${ta}-x`,
      });
      await saveDraft(trx, ta, { title: 'A', skus: ['a'] });
      const held = await insertHeldChange(trx, {
        tenantId: ta,
        operation: 'products.update',
        input: {},
        requestedBy: { keyId: key.key_id },
        surface: 'rest',
        plan: { summary: 'Change a product', targets: ['catalogue'], basis: null },
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      const [c] = await trx('provider_connections')
        .insert({ tenant_id: ta, provider: 'psp_a', account_ref: `acct_${crypto.randomUUID()}`, label: '' })
        .returning('id');
      return { change: held.id, connection: c.id as string };
    });
    a = { tenant: ta, member: await member(ta), change, connection, email, key: key.key_id };
    b = { tenant: tb, member: await member(tb) };
  });

  it('read this tenant’s rows for its own people', async () => {
    const me = person(a.tenant, a.member);
    expect(((await run('products.summaries', me)) as { data: { prices: number }[] }).data).toEqual([
      expect.objectContaining({ prices: 1 }),
    ]);
    expect(((await run('customers.find', me, { email: a.email })) as { data: string[] }).data).toHaveLength(1);
    expect(((await run('sync.runs', me)) as { data: unknown[] }).data).toHaveLength(1);
    expect(await run('paywall.draft', me)).toMatchObject({ config: { title: 'A' }, published: false });
    expect(((await run('providers.connections', me)) as { data: unknown[] }).data).toHaveLength(1);
    expect(await run('providers.connection', me, { id: a.connection })).toMatchObject({ id: a.connection });
    expect(((await run('audit.people', me, { user_ids: [a.member] })) as { data: unknown[] }).data).toHaveLength(1);
    expect(await run('changes.list', me)).toMatchObject({ pending: [{ id: a.change, key_name: 'asks first' }] });
    expect(await run('changes.view', me, { id: a.change })).toMatchObject({ id: a.change, key_name: 'asks first' });
    expect(((await run('api_keys.list', me)) as { data: { id: string }[] }).data.map((k) => k.id)).toContain(a.key);
    expect(((await run('team.list', me)) as { members: unknown[] }).members).toHaveLength(1);
    expect(await run('overview.get', me, { mode: 'test', days: 30 })).toMatchObject({
      figures: { lastSyncRun: expect.objectContaining({ kind: 'sync' }) },
    });
  });

  it('read none of them for another tenant’s person: empty lists, and one record by id is not found', async () => {
    const other = person(b.tenant, b.member);
    expect(await run('products.summaries', other)).toEqual({ data: [] });
    expect(await run('customers.find', other, { email: a.email })).toEqual({ data: [] });
    expect(await run('sync.runs', other)).toEqual({ data: [] });
    expect(await run('paywall.draft', other)).toBeNull();
    expect(await run('providers.connections', other)).toEqual({ data: [] });
    await expect(run('providers.connection', other, { id: a.connection })).rejects.toMatchObject({ status: 404 });
    expect(await run('outbound_deliveries.recent_attempts', other, { delivery_ids: [crypto.randomUUID()] })).toEqual({
      data: [],
    });
    expect(await run('audit.people', other, { user_ids: [a.member] })).toEqual({ data: [] });
    expect(await run('changes.list', other)).toEqual({ pending: [], decided: [] });
    await expect(run('changes.view', other, { id: a.change })).rejects.toMatchObject({ status: 404 });
    const keys = (await run('api_keys.list', other)) as { data: { id: string }[] };
    expect(keys.data.map((k) => k.id)).not.toContain(a.key);
    const team = (await run('team.list', other)) as { members: { id: string }[]; keys: { id: string }[] };
    expect(team.members.map((m) => m.id)).toEqual([b.member]);
    expect(team.keys.map((k) => k.id)).not.toContain(a.key);
    expect(await run('overview.get', other, { mode: 'test', days: 30 })).toMatchObject({
      figures: { lastSyncRun: undefined },
    });
  });

  it('each role runs exactly the reads its role carries: keys for credentials, the team for its managers', async () => {
    for (const role of ROLES) {
      const who = person(a.tenant, a.member, role);
      const allowed: string[] = [];
      for (const name of READS) {
        const input: Record<string, unknown> =
          name === 'customers.find'
            ? { email: a.email }
            : name === 'providers.connection'
              ? { id: a.connection }
              : name === 'outbound_deliveries.recent_attempts'
                ? { delivery_ids: [] }
                : name === 'audit.people'
                  ? { user_ids: [] }
                  : name === 'changes.view'
                    ? { id: a.change }
                    : name === 'overview.get'
                      ? { mode: 'live', days: 90 }
                      : {};
        const refused = await run(name, who, input).then(
          () => false,
          (e: { status?: number }) => e.status === 403,
        );
        if (!refused) allowed.push(name);
      }
      const expected = READS.filter(
        (n) =>
          (n !== 'api_keys.list' || ['owner', 'admin', 'developer'].includes(role)) &&
          (n !== 'team.list' || ['owner', 'admin'].includes(role)),
      );
      expect([role, allowed]).toEqual([role, expected]);
    }
  });
});
