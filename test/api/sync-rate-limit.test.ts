import { describe, expect, it } from 'vitest';
import { createConnection } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import type { ProviderId } from '../../domain/providers';
import { RATE_LIMITS } from '../../domain/rate-limits';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { useEmulatorStack } from '../helpers/emulator-stack';
import { generateMasterKey } from '../../vault/vault';
import { testDb } from '../helpers/db';
import { call, newTenant } from '../helpers/api';
import { controlFor } from '../helpers/emulator-control';

/**
 * The sync keeps to each provider's documented rate limit, and gets over a provider that limits
 * harder than documented: emulators enforcing limits (POST /__control/rate-limit), a real worker,
 * the real Temporal server. The emulator's counters say what it saw.
 */
describe('sync under provider rate limits', () => {
  const masterKey = generateMasterKey();
  const stack = useEmulatorStack(masterKey);
  const control = (p: ProviderId) => controlFor(() => stack.emulators[p].url, { strict: true });

  /** A tenant connected to one provider in test mode only, with `n` priced products. */
  async function tenantWith(provider: ProviderId, n: number) {
    const t = await newTenant(`rl-${provider}`);
    await withTenant(testDb(), t.tenant_id, async (trx) => {
      const acct = await createEmulatorAccount(stack.emulators[provider].url);
      await createConnection(trx, stack.worker.vault, {
        provider,
        account_ref: acct.account,
        credentials: { test: acct.credentials.test },
        webhook_secret: acct.webhook_secret || null,
      });
      for (let i = 0; i < n; i++) {
        const [p] = await trx('products')
          .insert({ tenant_id: t.tenant_id, sku: `sku_${i}`, name: `Product ${i}`, tier: 'monthly' })
          .returning('id');
        await trx('prices').insert({
          tenant_id: t.tenant_id,
          product_id: p.id,
          country: 'US',
          currency: 'USD',
          amount_minor: 499 + i,
        });
      }
    });
    return t;
  }

  async function drain(secret: string) {
    const report = await call(stack.api.apiUrl, '/sync', secret);
    expect(report.status).toBe(200);
    return call(stack.api.apiUrl, '/sync', secret, {
      method: 'POST',
      body: JSON.stringify({ confirm_count: report.body.confirm_count }),
    });
  }

  it('psp_a at its documented test-mode limit (25 a second): the sync completes with no failure, never more than the limit got through, and (almost) no call was refused', async () => {
    const t = await tenantWith('psp_a', 12);
    const limit = RATE_LIMITS.psp_a.test;
    await control('psp_a')('POST', '/rate-limit', { enabled: true });
    try {
      const run = await drain(t.secret_key);
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ ok: true, synced: 12, failed: [] });
      const seen = await control('psp_a')('GET', '/rate-limit');
      const scope = seen.scopes.find((s: any) => s.mode === 'test');
      // More calls than one window allows, so the limit mattered. The emulator never let more
      // than the limit through in any second; the pacer kept the calls under it, bar the odd one
      // that arrived bunched on a loaded machine (more than the 50 ms margin of jitter), which the
      // emulator refused and the sync waited out (at most 1 in 8, seen up to 1 in 12 with four test
      // workers beside busy neighbours; unpaced, most would be refused).
      expect(scope.accepted).toBeGreaterThan(limit.limit);
      expect(scope.peak_in_window).toBeLessThanOrEqual(limit.limit);
      expect(scope.limited).toBeLessThanOrEqual(Math.ceil(scope.accepted / 8));
    } finally {
      await control('psp_a')('DELETE', '/rate-limit');
    }
  });

  it('psp_c limiting harder than we pace (6 a second, we pace at 10): 429s with Retry-After are waited out and the sync still completes with no failure', async () => {
    const t = await tenantWith('psp_c', 4);
    await control('psp_c')('POST', '/rate-limit', { limit: 6, window_ms: 1000 });
    try {
      const run = await drain(t.secret_key);
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ ok: true, synced: 4, failed: [] });
      const seen = await control('psp_c')('GET', '/rate-limit');
      expect(seen.limited).toBeGreaterThan(0);
      for (const s of seen.scopes) expect(s.peak_in_window).toBeLessThanOrEqual(6);
      const events = await call(stack.api.apiUrl, `/sync/events?run_id=${run.body.run_id}`, t.secret_key);
      expect(events.body.data.map((e: any) => [e.provider, e.status])).toEqual([['psp_c', 'succeeded']]);
    } finally {
      await control('psp_c')('DELETE', '/rate-limit');
    }
  });

  it("over the limit, each emulator answers its provider's own 429 with its retry header", async () => {
    for (const p of ['psp_b', 'psp_c'] as ProviderId[]) {
      await control(p)('POST', '/rate-limit', { limit: 1, window_ms: 60_000 });
    }
    try {
      const acctB = await createEmulatorAccount(stack.emulators.psp_b.url);
      const b = (
        await Promise.all(
          [1, 2].map(() =>
            fetch(`${stack.emulators.psp_b.url}/products`, {
              headers: { authorization: `Bearer ${acctB.credentials.test.api_key}` },
            }),
          ),
        )
      ).find((r) => r.status === 429)!;
      expect(Number(b.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await b.json()).toMatchObject({ error: { type: 'api_error', code: 'too_many_requests' } });

      const acctC = await createEmulatorAccount(stack.emulators.psp_c.url);
      const basic = `Basic ${Buffer.from(`${acctC.credentials.test.key_id}:${acctC.credentials.test.key_secret}`).toString('base64')}`;
      const c = (
        await Promise.all(
          [1, 2].map(() => fetch(`${stack.emulators.psp_c.url}/v1/items`, { headers: { authorization: basic } })),
        )
      ).find((r) => r.status === 429)!;
      expect(Number(c.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await c.json()).toMatchObject({ error: { code: 'BAD_REQUEST_ERROR', description: 'Too many requests' } });
    } finally {
      for (const p of ['psp_b', 'psp_c'] as ProviderId[]) await control(p)('DELETE', '/rate-limit');
    }
    // Off again: nothing is refused.
    expect((await control('psp_b')('GET', '/rate-limit')).enabled).toBe(false);
  });
});
