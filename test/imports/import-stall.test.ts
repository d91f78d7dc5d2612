import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTenant } from '../../db/tenant-tx';
import { createEmulatorAccount } from '../../seed/demo-providers';
import { newTenant } from '../helpers/api';
import { createProvenConnection } from '../helpers/connections';
import { testDb } from '../helpers/db';
import { startStoreStack, type StoreStack } from '../helpers/stores';

/**
 * Issue 42, item 1: an uploaded import must not hold the api process's one thread. Three hostile
 * files (10,000 lines of 98 commas, about 1 MB each, from three tenants with proven connections)
 * are sent to one real api process, then a premium check and /healthz: both are answered before
 * any of the imports. An ordering, not a timing: while a file was parsed on the request thread,
 * the two waited behind every parse and the imports answered first.
 */
describe('hostile imports do not stall the api process', () => {
  let s: StoreStack;
  const tenants: { tenant_id: string; secret_key: string }[] = [];

  beforeAll(async () => {
    s = await startStoreStack('import-stall', { apiProcessEnv: {} });
    tenants.push(s.tenant);
    for (const name of ['import-stall-b', 'import-stall-c']) {
      const t = await newTenant(name);
      const ios = await createEmulatorAccount(s.emulators.store_ios.url);
      await withTenant(testDb(), t.tenant_id, (trx) =>
        createProvenConnection(trx, s.worker.vault, {
          provider: 'store_ios',
          account_ref: ios.account,
          credentials: ios.credentials,
        }),
      );
      tenants.push(t);
    }
  });
  afterAll(async () => s?.close());

  /** One request on its own connection; resolves with the status once the whole answer has arrived. */
  function send(
    url: string,
    opts: { method: string; key: string; body?: string },
  ): { sent: Promise<void>; answered: Promise<number> } {
    let sent!: () => void;
    const sentP = new Promise<void>((r) => (sent = r));
    const answered = new Promise<number>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: opts.method,
          agent: false,
          headers: {
            authorization: `Bearer ${opts.key}`,
            ...(opts.body
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body) }
              : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(opts.body, () => sent());
    });
    return { sent: sentP, answered };
  }

  it('a premium check and /healthz sent after three 1 MB imports are answered before any of the imports', async () => {
    const root = s.api.apiRoot;
    const hostile = [
      'original_transaction_id,app_user_id',
      ...Array.from({ length: 10_000 }, () => ','.repeat(98)),
    ].join('\n');
    const order: string[] = [];
    const imports = tenants.map((t, i) => {
      const r = send(`${root}/v1/imports`, {
        method: 'POST',
        key: t.secret_key,
        body: JSON.stringify({ provider: 'store_ios', csv: hostile }),
      });
      return { ...r, answered: r.answered.then((status) => (order.push(`import ${i}`), status)) };
    });
    // "After them": every import's body has left this process before the two are sent.
    await Promise.all(imports.map((r) => r.sent));
    const premium = send(`${root}/v1/sdk/subscribers/stall-probe`, { method: 'GET', key: s.pkTest });
    const health = send(`${root}/healthz`, { method: 'GET', key: '' });
    const probes = [
      premium.answered.then((status) => (order.push('premium'), status)),
      health.answered.then((status) => (order.push('healthz'), status)),
    ];
    const [premiumStatus, healthStatus] = await Promise.all(probes);
    const importStatuses = await Promise.all(imports.map((r) => r.answered));
    expect([premiumStatus, healthStatus]).toEqual([200, 200]);
    expect(importStatuses).toEqual([202, 202, 202]);
    // Both probes come first, in whichever order between themselves.
    expect(order.slice(0, 2).sort()).toEqual(['healthz', 'premium']);
  });
});
