import type { Knex } from 'knex';
import type { Config } from '../runtime/config';
import { PROVIDERS, type ProviderId } from '../domain/providers';
import { listConnectionsSafe } from '../db/connections';
import { withTenant } from '../db/tenant-tx';

type EndpointRow = { url?: unknown; account?: unknown };

/**
 * Register the service's webhook URL (the dashboard host's /api/webhooks/<provider>) for the
 * demo's account at every emulator that has a webhook-endpoint control route, as a tenant
 * does in Stripe's dashboard: without it a hosted checkout has nowhere to deliver its events
 * and answers "No webhook endpoint is registered for this account". Runs on every start; an
 * endpoint already registered is left alone, an emulator without the route (404) is skipped,
 * one not answering is named through `warn`. Returns the providers whose endpoint is in place.
 */
export async function registerDemoWebhooks(
  db: Knex,
  config: Pick<Config, 'providerBaseUrls' | 'publicDashboardUrl'>,
  tenantId: string,
  warn: (line: string) => void = () => {},
): Promise<ProviderId[]> {
  const connections = await withTenant(db, tenantId, (trx) => listConnectionsSafe(trx));
  const registered: ProviderId[] = [];
  for (const provider of PROVIDERS) {
    const account =
      connections.find((c) => c.provider === provider && c.is_default)?.account_ref ??
      connections.find((c) => c.provider === provider)?.account_ref;
    if (!account) continue;
    const url = `${config.publicDashboardUrl.replace(/\/+$/, '')}/api/webhooks/${provider}`;
    const base = config.providerBaseUrls[provider];
    try {
      if (await alreadyRegistered(base, url, account)) {
        registered.push(provider);
        continue;
      }
      const res = await fetch(`${base}/__control/webhook_endpoints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url, account }),
        signal: AbortSignal.timeout(30_000),
      });
      if (res.ok) registered.push(provider);
      // 404: this emulator has no such route (its provider has no hosted checkout to deliver from).
      else if (res.status !== 404)
        warn(
          `${provider}: webhook URL not registered, the emulator answered ${res.status}: ${(await res.text()).slice(0, 200)}`,
        );
    } catch (err) {
      // Not running, or not answering: the demo still starts (connectDemoProviders skips it the same way); the banner
      // shows what is registered.
      warn(`${provider}: webhook URL not registered (${(err as Error).message})`);
    }
  }
  return registered;
}

/**
 * The emulators keep their state across starts (under the data dir), so the endpoint may be
 * there already. Hosted pages deliver to the account's latest endpoint: only when that one is
 * ours is nothing to do (a start on other ports registers its own URL anew).
 */
async function alreadyRegistered(base: string, url: string, account: string): Promise<boolean> {
  const res = await fetch(`${base}/__control/state`, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) return false;
  const state = (await res.json()) as Record<string, unknown>;
  const rows = Array.isArray(state.webhook_endpoints) ? (state.webhook_endpoints as EndpointRow[]) : [];
  return rows.filter((e) => !e.account || e.account === account).at(-1)?.url === url;
}
