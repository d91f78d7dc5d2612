/**
 * The shape of API keys: pure rules only. Generation and hashing need randomness and
 * node:crypto, so they live beside auth in api/keys.ts.
 */
export const SECRET_KEY_PREFIX = 'sk_';
export const SECRET_KEY_RE = /^sk_[0-9A-Za-z]{32,}$/;

/** What the dashboard shows to recognise a key: prefix and last four characters. */
export function keyHint(key: string): string {
  return `${key.slice(0, 3)}…${key.slice(-4)}`;
}
