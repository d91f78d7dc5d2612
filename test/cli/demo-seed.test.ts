import { describe, expect, it } from 'vitest';
import { seedDemoTenant } from '../../seed/demo';
import { DEMO_PRODUCTS, demoSubscribers } from '../../seed/demo-data';
import { testDb } from '../helpers/db';
import { newTenant } from '../helpers/api';

describe('demo seeding', () => {
  it('is all-or-nothing and idempotent, also when two starters seed at once', async () => {
    const t = await newTenant('seed');
    await Promise.all([seedDemoTenant(testDb(), t.tenant_id), seedDemoTenant(testDb(), t.tenant_id)]);
    await seedDemoTenant(testDb(), t.tenant_id);
    const count = async (table: string) =>
      Number((await testDb()(table).where({ tenant_id: t.tenant_id }).count({ n: '*' }).first())!.n);
    expect(await count('products')).toBe(DEMO_PRODUCTS.length);
    expect(await count('subscriptions')).toBe(demoSubscribers().length);
    expect(await count('paywalls')).toBe(1);
  });
});
