import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { PROVIDERS, type ProviderId } from '../domain/providers';
import { resolveMasterKey } from '../vault/master-key';
import { createVault } from '../vault/vault';
import { listConnectionsSafe } from '../db/connections';
import { attachToApp } from '../db/app-providers';
import { createConnection, markConnectionProven } from '../db/connection-service';
import { noteReadinessChange } from '../db/outbound-events';
import { withTenant } from '../db/tenant-tx';

interface EmulatorAccount {
  account: string;
  credentials: { test: Record<string, string>; live: Record<string, string> };
  webhook_secret: string;
}

/** Ask an emulator's control API for a connected account (what the OAuth connect flow yields). */
export async function createEmulatorAccount(baseUrl: string, account?: string): Promise<EmulatorAccount> {
  const res = await fetch(`${baseUrl}/__control/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(account ? { account } : {}),
    // Generous: a local emulator on a machine whose cores are busy (a test run, a first start) may take
    // seconds to answer; the bound is for one that never does.
    signal: AbortSignal.timeout(30_000),
  });
  if (!res.ok) throw new Error(`emulator at ${baseUrl} answered ${res.status}`);
  return (await res.json()) as EmulatorAccount;
}

/**
 * Connect the demo tenant to each emulator that is running (one default connection per
 * provider, attached to the demo app). Providers already connected are left alone, so this
 * runs on every start; an emulator that is not running is skipped and tried next time.
 */
export async function connectDemoProviders(db: Knex, config: Config, tenantId: string): Promise<ProviderId[]> {
  const vault = createVault(resolveMasterKey(config));
  const connected: ProviderId[] = [];
  for (const provider of PROVIDERS) {
    const existing = await withTenant(db, tenantId, (trx) => listConnectionsSafe(trx, { provider }));
    if (existing.length > 0) continue;
    let acct: EmulatorAccount;
    try {
      acct = await createEmulatorAccount(config.providerBaseUrls[provider]);
    } catch {
      continue;
    }
    await withTenant(db, tenantId, async (trx) => {
      const conn = await createConnection(trx, vault, {
        provider,
        account_ref: acct.account,
        label: `Demo ${provider}`,
        is_default: true,
        credentials: { test: acct.credentials.test, live: acct.credentials.live },
        webhook_secret: acct.webhook_secret || null,
      });
      // Proven as the control API's account: the emulator created it for us just now, which
      // vouches for it the way OAuth's consent would, and the worker (which runs the probe) is
      // not up yet while npm start seeds.
      await markConnectionProven(trx, conn.id, 'control_api');
      const app = await trx('apps').orderBy('created_at').first('id');
      await attachToApp(trx, app.id, provider);
      // A later start may connect an emulator that was down before: the demo's endpoints hear it.
      await noteReadinessChange(trx, tenantId);
    });
    connected.push(provider);
  }
  return connected;
}
