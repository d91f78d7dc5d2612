import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHARTS } from '../../domain/charts/chart-list';
import { OPERATIONS } from '../../operations';
import { executeOperation } from '../../operations/execute';
import { ApiError } from '../../operations/errors';
import type { UserActor } from '../../operations/actor';
import type { Operation } from '../../operations/types';
import type { Services } from '../../operations/services';
import { signUpUser } from '../../db/dashboard-users';
import { createLogger } from '../../runtime/logger';
import { seedDemoTenant } from '../../seed/demo';
import { testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { newTenant, testServices } from '../helpers/api';

/**
 * The dashboard is one more surface over the same operations (api/dashboard/run-operation.ts), so
 * the loops that hold for REST hold for a person in the dashboard: the same isolation between
 * tenants, the same input rules on every operation (writes and account operations included), and
 * every refused write audited under the operation's name as the person's.
 */
describe('a person in the dashboard runs the operations under the same rules as a key', () => {
  let services: Services;
  let person: UserActor;
  let aIds: Set<string>;
  let aUsers: string[];
  const log = createLogger('silent');
  const asPerson = async (op: Operation, input: Record<string, unknown>) => {
    try {
      return {
        status: 200,
        body: await executeOperation(op, person, input, {
          requestId: 'req_dashboard_surface',
          services,
          log,
          surface: 'dashboard',
        }),
      };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { status: e.status, body: e.toBody() };
    }
  };

  beforeAll(async () => {
    services = testServices();
    const a = await newTenant('A');
    await seedDemoTenant(testDb(), a.tenant_id);
    const user = await signUpUser(testDb(), {
      email: `b-${Date.now()}@example.com`,
      passwordHash: 'unused: this person never signs in',
    });
    await seedDemoTenant(testDb(), user.tenant_id);
    person = { kind: 'user', tenantId: user.tenant_id, userId: user.id, role: 'owner' };
    aIds = new Set([a.tenant_id]);
    // A customer only tenant A has (the demo seed gives both tenants the same app user ids).
    aUsers = [`a_only_${crypto.randomUUID()}`];
    await makeEntitlement(a.tenant_id, { appUserId: aUsers[0], subscription: {} });
    const tables = await testDb()('information_schema.columns')
      .where({ column_name: 'tenant_id', table_schema: 'public' })
      .pluck('table_name');
    for (const table of tables) {
      if (!(await testDb()('information_schema.columns').where({ table_name: table, column_name: 'id' }).first()))
        continue;
      for (const r of await testDb()(table).where({ tenant_id: a.tenant_id }).select('id')) aIds.add(r.id);
    }
  });
  afterAll(async () => services.temporal?.connection.close());

  it('no read answered to the person contains another tenant’s ids', async () => {
    expect(aIds.size).toBeGreaterThan(20);
    let lists = 0;
    for (const op of OPERATIONS.filter((o) => !o.write && o.rest?.method === 'GET')) {
      const byId = op.rest!.path.includes('{id}');
      const byUser = op.rest!.path.includes('{app_user_id}');
      const inputs: Record<string, unknown>[] = byId
        ? [...aIds]
            .slice(0, 20)
            .map((id) => (op.rest!.path.includes('{name}') ? { id, name: 'customers.csv' } : { id }))
        : byUser
          ? aUsers.map((app_user_id) => ({ app_user_id }))
          : op.rest!.path.includes('{name}')
            ? CHARTS.map((c) => ({ name: c.name }))
            : op.rest!.path.includes('{date}')
              ? [{ date: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10) }]
              : [op.input.safeParse({ limit: 200 }).success ? { limit: 200 } : {}];
      for (const input of inputs) {
        const r = await asPerson(op, input);
        expect([op.name, r.status]).toEqual([op.name, byId || byUser ? 404 : 200]);
        const text = JSON.stringify(r.body);
        for (const id of aIds)
          if (text.includes(id)) throw new Error(`${op.name} leaked tenant A's id ${id} to a person of tenant B`);
      }
      if (!byId) lists++;
    }
    expect(lists).toBeGreaterThanOrEqual(8);
  });

  it('every operation refuses a tenant in the input and an unknown field by name; a refused write is audited as the person’s', async () => {
    const writes = OPERATIONS.filter((o) => o.write);
    expect(writes.length).toBeGreaterThanOrEqual(12);
    for (const op of OPERATIONS) {
      const before = await testDb()('audit_entries')
        .where({ tenant_id: person.tenantId, action: op.name })
        .count('* as n')
        .first();
      const tenant = await asPerson(op, { tenant_id: person.tenantId });
      expect([op.name, tenant.status, tenant.body]).toMatchObject([
        op.name,
        400,
        { error: 'invalid_request', param: 'tenant_id' },
      ]);
      const unknown = await asPerson(op, { not_a_field: 1 });
      expect([op.name, unknown.status, unknown.body]).toMatchObject([op.name, 400, { error: 'invalid_request' }]);
      expect(String((unknown.body as { detail?: string }).detail)).toContain('not_a_field');
      const rows = await testDb()('audit_entries')
        .where({ tenant_id: person.tenantId, action: op.name })
        .orderBy('created_at')
        .select('actor_type', 'actor_id', 'outcome', 'detail');
      expect(rows.length - Number(before!.n)).toBe(op.write ? 2 : 0);
      for (const row of rows.slice(Number(before!.n))) {
        const detail = typeof row.detail === 'string' ? JSON.parse(row.detail) : row.detail;
        expect([op.name, row.actor_type, row.actor_id, row.outcome, detail.surface]).toEqual([
          op.name,
          'user',
          person.userId,
          'invalid_request',
          'dashboard',
        ]);
      }
    }
  });
});
