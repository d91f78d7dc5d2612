import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { OPERATIONS } from '../../operations';
import { createVault, generateMasterKey } from '../../vault/vault';
import { withTenant } from '../../db/tenant-tx';
import { appDb } from '../helpers/db';
import { assertMatchesOpenApi, call, keyWith, newTenant, refill, startApi } from '../helpers/api';

/**
 * The outbound webhook operations' scope matrix, with real ids and bodies: with only its scope
 * a call is answered (and matches the OpenAPI document), with every other scope it is 403.
 */
// The delete last: the other calls name the endpoint it removes.
const OUTBOUND = OPERATIONS.filter((o) => o.rest && /^\/(webhook-endpoints|outbound-)/.test(o.rest.path)).sort(
  (a, b) => Number(a.rest!.method === 'DELETE') - Number(b.rest!.method === 'DELETE'),
);

describe('outbound webhooks: scopes', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let endpointId: string;
  let eventId: string;
  let deliveryId: string;
  beforeAll(async () => {
    api = await startApi({ vault: createVault(generateMasterKey()) });
    t = await newTenant('outbound-scopes');
    endpointId = (
      await call(api.apiUrl, '/webhook-endpoints', t.secret_key, {
        method: 'POST',
        body: JSON.stringify({ url: 'https://example.com/hook' }),
      })
    ).body.id;
    // An event as the database records one (no worker here: it stays queued).
    await withTenant(appDb(), t.tenant_id, async (trx) => {
      eventId = (
        await trx.raw('select record_outbound_event(?, ?, null, ?::jsonb) as id', [
          t.tenant_id,
          'sync_run.finished',
          '{}',
        ])
      ).rows[0].id;
      deliveryId = (await trx('outbound_deliveries').where({ event_id: eventId }).first('id')).id;
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('every outbound operation is webhooks:read (reads) or webhooks:write (writes)', () => {
    expect(OUTBOUND.length).toBe(11);
    for (const op of OUTBOUND)
      expect([op.name, op.scope]).toEqual([op.name, op.write ? 'webhooks:write' : 'webhooks:read']);
  });

  for (const op of OUTBOUND) {
    it(`${op.rest!.method} ${op.rest!.path}: only-its-scope → answered, every-other-scope → 403`, async () => {
      await refill(t.tenant_id);
      const only = await keyWith(t.tenant_id, [op.scope as Scope]);
      const allBut = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== op.scope) as Scope[]);
      const id = op.rest!.path.startsWith('/webhook-endpoints')
        ? endpointId
        : op.rest!.path.startsWith('/outbound-events')
          ? eventId
          : deliveryId;
      const path = op.rest!.path.replace('{id}', id);
      const bodies: Record<string, unknown> = {
        'webhook_endpoints.create': { url: 'https://example.com/other' },
        'webhook_endpoints.update': { description: 'x' },
        'webhook_endpoints.rotate_secret': {},
        'outbound_events.replay': {},
        'outbound_deliveries.replay_failed': { since: new Date(0).toISOString() },
      };
      const body = op.rest!.method === 'GET' || op.rest!.noBody ? undefined : JSON.stringify(bodies[op.name]);
      const no = await call(api.apiUrl, path, allBut.secret_key, { method: op.rest!.method, body });
      expect(no.status).toBe(403);
      expect(no.body.detail).toContain(op.scope);
      const ok = await call(api.apiUrl, path, only.secret_key, { method: op.rest!.method, body });
      expect([op.name, ok.status]).toEqual([op.name, 200]);
      assertMatchesOpenApi(op.rest!.method, op.rest!.path, ok);
    });
  }
});
