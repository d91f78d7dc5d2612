import type { Knex } from 'knex';
import { pruneIdleClientBuckets, takeClientBucketTokens } from '../../db/client-limits';
import { pruneExpiredMisses } from '../../db/store-purchase-misses';
import { clientAddressKey } from '../../domain/client-address-key';
import { clientRateRefusals } from '../../runtime/metrics';
import { ApiError } from '../../operations/errors';

/**
 * Rate limits of the client endpoints (/v1/sdk/*). Publishable keys ship inside apps, so
 * anyone can spend what they spend: they draw from buckets of their own (table
 * `client_rate_limit_buckets`), never from the management bucket a tenant's
 * secret keys need. Sizes are for apps with millions of installs: the tenant's client bucket
 * is large, each app user's and each client address's is small.
 */
export interface BucketSpec {
  /**
   * Name within the tenant (the row's key is the tenant and this name): `sdk`, `user:<app user>`,
   * `addr:<address key>`, `reg:<app user>`, `regaddr:<address key>`, `regs`. An address key is
   * the address for IPv4, the /64 for IPv6 (domain/client-address-key.ts).
   */
  name: string;
  capacity: number;
  refillPerSecond: number;
}

export const CLIENT_LIMITS = {
  /** Every client request of the tenant: 10,000 burst, 200/s sustained (~17 M a day). */
  tenant: { capacity: 10_000, refillPerSecond: 200 },
  /** Per (tenant, app user): an SDK with its cache calls rarely; a loop on one user stops here. */
  user: { capacity: 60, refillPerSecond: 1 },
  /**
   * Per (tenant, client address; an IPv6 client's whole /64): many installs can share one
   * address (carrier-grade NAT puts thousands behind one), so this only stops one address
   * hammering: 2,000 burst, 100/s.
   */
  address: { capacity: 2_000, refillPerSecond: 100 },
  /** Store purchase registrations per (tenant, app user): each can cost a workflow and a store call. */
  registration: { capacity: 10, refillPerSecond: 1 / 30 },
  /**
   * Store purchase registrations per (tenant, client address): app user ids are chosen by the
   * client, so a fresh id must not be a fresh allowance. 20 burst, one every 30 s after.
   */
  registrationAddress: { capacity: 20, refillPerSecond: 1 / 30 },
  /**
   * Store purchase registrations of the whole tenant: 300 burst, 2/s (120 a minute, a
   * twenty-fifth of Play's 3,000 queries a minute), so however many addresses a key holder
   * has, registrations cannot spend the tenant's store quota. Purchases still arrive by the
   * stores' server notifications when this is spent.
   */
  registrationTenant: { capacity: 300, refillPerSecond: 2 },
} as const;

/** Seconds after which an unused bucket is full again (the slowest refill, with margin): its row can go. */
const PRUNE_AFTER_S = 600;

export const tenantBucket = (): BucketSpec => ({ name: 'sdk', ...CLIENT_LIMITS.tenant });
export const userBucket = (appUserId: string): BucketSpec => ({ name: `user:${appUserId}`, ...CLIENT_LIMITS.user });
/** `address` is the client's address as `ctx.ip` has it; the bucket is named by its key (IPv6: the /64). */
export const addressBucket = (address: string): BucketSpec => ({
  name: `addr:${clientAddressKey(address)}`,
  ...CLIENT_LIMITS.address,
});
/**
 * The registration lanes one store purchase registration spends: the app user's, the client address's and the tenant's.
 */
export const registrationBuckets = (appUserId: string, address: string): BucketSpec[] => [
  { name: `reg:${appUserId}`, ...CLIENT_LIMITS.registration },
  { name: `regaddr:${clientAddressKey(address)}`, ...CLIENT_LIMITS.registrationAddress },
  { name: 'regs', ...CLIENT_LIMITS.registrationTenant },
];

export interface ClientDecision {
  allowed: boolean;
  /** The bucket closest to empty: what the RateLimit headers describe. */
  tightest: BucketSpec;
  remaining: number;
  retryAfterSeconds: number;
  /** Refused: the names of the buckets that had no token (the others had one). */
  empty: string[];
}

/**
 * One token from each bucket, or from none: one statement (`take_client_tokens`), so it holds
 * across replicas, and a refused request writes nothing.
 */
export async function takeClientTokens(db: Knex, tenantId: string, specs: BucketSpec[]): Promise<ClientDecision> {
  // A fixed lock order (by name) keeps concurrent requests that share buckets from deadlocking.
  const buckets = [...new Map(specs.map((s) => [s.name, s])).values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const { ok, levels } = await takeClientBucketTokens(db, tenantId, buckets);
  maybePrune(db);
  let tightest = 0;
  for (let i = 1; i < buckets.length; i++)
    if (levels[i] / buckets[i].capacity < levels[tightest] / buckets[tightest].capacity) tightest = i;
  if (ok)
    return {
      allowed: true,
      tightest: buckets[tightest],
      remaining: Math.floor(levels[tightest]),
      retryAfterSeconds: 0,
      empty: [],
    };
  // Refused: wait for the slowest of the empty buckets.
  let wait = 1;
  let worst = buckets[tightest];
  buckets.forEach((b, i) => {
    if (levels[i] >= 1) return;
    const s = Math.ceil((1 - levels[i]) / b.refillPerSecond);
    if (s >= wait) [wait, worst] = [s, b];
  });
  return {
    allowed: false,
    tightest: worst,
    remaining: 0,
    retryAfterSeconds: wait,
    empty: buckets.filter((_, i) => levels[i] < 1).map((b) => b.name),
  };
}

/**
 * Rows of buckets untouched for longer than any takes to refill are the same as no row. Pruned
 * now and then from the request path (about one request in 2,000, not awaited), so the table
 * stays the size of recent callers without a timer to run.
 */
function maybePrune(db: Knex): void {
  if (Math.random() >= 1 / 2000) return;
  void pruneIdleClientBuckets(db, PRUNE_AFTER_S)
    .then(() => pruneExpiredMisses(db))
    .catch(() => undefined); // best effort: the next prune catches up
}

export function clientRateHeaders(d: ClientDecision): Record<string, string> {
  const b = d.tightest;
  const reset = d.allowed ? Math.ceil((b.capacity - d.remaining) / b.refillPerSecond) : d.retryAfterSeconds;
  return {
    'RateLimit-Limit': String(b.capacity),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(reset),
    'RateLimit-Policy': `${b.capacity};w=${Math.round(b.capacity / b.refillPerSecond)}`,
  };
}

/** The kind of a bucket, from its name: a bounded label for metrics and the words of a refusal. */
export type BucketKind =
  'tenant' | 'address' | 'user' | 'registration_user' | 'registration_address' | 'registration_tenant';
export function bucketKind(name: string): BucketKind {
  if (name === 'sdk') return 'tenant';
  if (name === 'regs') return 'registration_tenant';
  if (name.startsWith('addr:')) return 'address';
  if (name.startsWith('regaddr:')) return 'registration_address';
  if (name.startsWith('reg:')) return 'registration_user';
  return 'user';
}

const WHOSE: Record<BucketKind, string> = {
  tenant: 'this app’s tenant',
  address: 'this client address',
  user: 'this app user',
  registration_user: 'purchase registrations of this app user',
  registration_address: 'purchase registrations from this client address',
  registration_tenant: 'purchase registrations of this app’s tenant',
};

export const clientRateLimited = (d: ClientDecision) => {
  const kind = bucketKind(d.tightest.name);
  clientRateRefusals.inc({ limit: kind });
  return new ApiError(
    429,
    'rate_limited',
    `Rate limit for ${WHOSE[kind]} exhausted; retry after ${d.retryAfterSeconds} s.`,
    {},
    {
      'Retry-After': String(d.retryAfterSeconds),
      ...clientRateHeaders(d),
    },
  );
};
