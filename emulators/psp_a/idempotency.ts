import crypto from 'node:crypto';
import type { FormObject } from './form';
import { StripeApiError } from './errors';
import type { Scope } from './repo';

interface Saved {
  method: string;
  path: string;
  fingerprint: string;
  status: number;
  body: unknown;
  at: number;
}

const TTL_MS = 24 * 3600 * 1000; // Stripe keeps keys for at least 24 hours
const MAX_KEYS = 100_000;

function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/**
 * Stripe's Idempotency-Key: the first successful result of a key is replayed for the same
 * parameters; the same key with other parameters (or another endpoint) is a 400
 * idempotency_error. Keys are scoped to the account acted on and its mode, and kept in
 * memory (a restarted emulator forgets them, as a key older than Stripe's window would be).
 */
export class IdempotencyCache {
  private saved = new Map<string, Saved>();

  private keyOf(scope: Scope, key: string): string {
    return `${scope.account}|${scope.livemode ? 1 : 0}|${key}`;
  }

  /** The saved response to replay, or undefined to run the request. */
  lookup(scope: Scope, key: string, method: string, path: string, body: FormObject): Saved | undefined {
    if (key.length > 255) {
      throw new StripeApiError(400, 'invalid_request_error', 'Idempotency-Key must be at most 255 characters long.');
    }
    const hit = this.saved.get(this.keyOf(scope, key));
    if (!hit) return undefined;
    if (Date.now() - hit.at > TTL_MS) {
      this.saved.delete(this.keyOf(scope, key));
      return undefined;
    }
    if (hit.method !== method || hit.path !== path || hit.fingerprint !== this.fingerprint(body)) {
      throw new StripeApiError(
        400,
        'idempotency_error',
        `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
      );
    }
    return hit;
  }

  save(
    scope: Scope,
    key: string,
    method: string,
    path: string,
    body: FormObject,
    status: number,
    response: unknown,
  ): void {
    if (this.saved.size >= MAX_KEYS) {
      // Oldest first: Map iteration follows insertion order.
      const oldest = this.saved.keys().next().value;
      if (oldest !== undefined) this.saved.delete(oldest);
    }
    this.saved.set(this.keyOf(scope, key), {
      method,
      path,
      fingerprint: this.fingerprint(body),
      status,
      body: response,
      at: Date.now(),
    });
  }

  private fingerprint(body: FormObject): string {
    return crypto.createHash('sha256').update(canonical(body)).digest('hex');
  }
}
