import type { Mode, ProviderId } from './providers';

/**
 * The shape of this service's own API keys, stated once: pure rules only. Minting and hashing
 * need randomness and node:crypto, so they live in db/key-material.ts.
 *
 * Secret keys (`sk_…`) call /v1 from servers. Publishable keys (`pk_test_…`, `pk_live_…`) ship
 * inside apps, call /v1/sdk, and name the mode of the records they may read.
 */
export const SECRET_KEY_PREFIX = 'sk_';
export const SECRET_KEY_RE = new RegExp(`^${SECRET_KEY_PREFIX}[0-9A-Za-z]{32,}$`);

/** `pk_test_` or `pk_live_`: what every publishable key of that mode starts with. */
export const publishableKeyPrefix = (mode: Mode): string => `pk_${mode}_`;
const PUBLISHABLE_KEY_RE = /^pk_(test|live)_[0-9A-Za-z]{16,}$/;

/** The mode a well-formed publishable key names, or null for anything that is not one. */
export function publishableKeyMode(key: string): Mode | null {
  const m = PUBLISHABLE_KEY_RE.exec(key);
  return m ? (m[1] as Mode) : null;
}

/** A secret key, well-formed or not: refused loudly where only a publishable key belongs. */
export const looksLikeSecretKey = (key: string): boolean => key.startsWith(SECRET_KEY_PREFIX);

/** What the dashboard shows to recognise a key: prefix and last four characters. */
export function keyHint(key: string): string {
  return `${key.slice(0, SECRET_KEY_PREFIX.length)}…${key.slice(-4)}`;
}

/**
 * Provider credentials that name their mode by prefix, stated once for the adapters, the drift
 * report and the emulators: Stripe secret and restricted keys, Paddle API keys, Razorpay key ids
 * (and OAuth public tokens). A key with neither prefix (Paddle's older format) names no mode.
 */
const PROVIDER_KEY_PREFIXES: Partial<Record<ProviderId, Record<Mode, readonly string[]>>> = {
  psp_a: { test: ['sk_test_', 'rk_test_'], live: ['sk_live_', 'rk_live_'] },
  psp_b: { test: ['pdl_sdbx_'], live: ['pdl_live_'] },
  psp_c: { test: ['rzp_test_'], live: ['rzp_live_'] },
};

/** The mode a provider key names by its prefix, or null when it names none (or the provider's keys never do). */
export function providerKeyMode(provider: ProviderId, key: string): Mode | null {
  const prefixes = PROVIDER_KEY_PREFIXES[provider];
  if (!prefixes) return null;
  if (prefixes.test.some((p) => key.startsWith(p))) return 'test';
  if (prefixes.live.some((p) => key.startsWith(p))) return 'live';
  return null;
}
