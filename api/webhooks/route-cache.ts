import { ConnectionError, findConnectionByAccount } from '../../db/connections';
import { loadWebhookSecret } from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import type { ProviderId } from '../../domain/providers';
import type { Services } from '../../operations/services';
import { needsWebhookSecret } from './accounts';

/** Where an event from a connected account goes, and the secret its signature is checked with. */
export interface Route {
  tenant_id: string;
  connection_id: string;
  /** Null when the connection has none (the reason says why): its events are refused as unverifiable. */
  secret: string | null;
  secretProblem?: string;
}

/**
 * Long enough to spare a lookup and a decryption per event under load, short enough that a change is felt within it.
 */
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

export interface RouteCache {
  /** The account's route (`cached`: read from the cache), or null when no active connection has it (never cached). */
  get(provider: ProviderId, account: string, fresh?: boolean): Promise<(Route & { cached: boolean }) | null>;
}

const caches = new WeakMap<Services, RouteCache>();

/**
 * Receipt cost, per event, was a connection lookup and a vault decryption of the signing
 * secret. Both are kept per process for TTL_MS, keyed by provider and account (which names the
 * tenant); unknown accounts are not kept, so a stranger cannot fill the cache. A signature that
 * fails against a cached secret is checked once more against a fresh read (the tenant may have
 * just rotated it), so a rotation is never refused.
 */
export function routeCacheFor(services: Services): RouteCache {
  let cache = caches.get(services);
  if (!cache) {
    cache = createRouteCache(services);
    caches.set(services, cache);
  }
  return cache;
}

function createRouteCache(services: Services): RouteCache {
  const entries = new Map<string, { route: Route; until: number }>();
  return {
    async get(provider, account, fresh = false) {
      const key = `${provider}\u0000${account}`;
      const hit = entries.get(key);
      if (hit && !fresh && hit.until > Date.now()) return { ...hit.route, cached: true };
      entries.delete(key);
      const conn = await findConnectionByAccount(services.db, provider, account);
      if (!conn) return null;
      let route: Route = { ...conn, secret: '' };
      if (needsWebhookSecret(provider)) {
        try {
          route.secret = await withTenant(services.db, conn.tenant_id, (trx) =>
            loadWebhookSecret(trx, services.vault!, conn.connection_id),
          );
        } catch (err) {
          if (!(err instanceof ConnectionError)) throw err;
          route = { ...route, secret: null, secretProblem: err.message };
        }
      }
      // Oldest first out: a Map iterates in insertion order.
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(key, { route, until: Date.now() + TTL_MS });
      return { ...route, cached: false };
    },
  };
}
