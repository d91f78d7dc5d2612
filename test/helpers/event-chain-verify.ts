import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'vitest';

/**
 * An independent check of a customer's hash chain (docs/event-proofs.md): the `canonicalize`
 * package's RFC 8785 and Node's SHA-256, never the service's own code. Each event's `hash` covers
 * its `data` without `hash`; each `prev_hash` is the previous `hash` (`from`: the hash before the
 * first, 64 zeros for a chain read from its start) and each `sequence` the previous one plus one.
 * Bodies without an email field (their own proof form).
 */
export const ZERO_HASH = '0'.repeat(64);
export const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

export function verifyChain(events: Array<{ data: Record<string, unknown> }>, from = ZERO_HASH): void {
  let prev = from;
  let seq: number | undefined;
  for (const e of events) {
    const { hash, ...rest } = e.data;
    expect(rest.prev_hash).toBe(prev);
    if (seq !== undefined) expect(rest.sequence).toBe(seq + 1);
    expect(hash).toBe(sha256(canonicalize(rest)!));
    prev = hash as string;
    seq = rest.sequence as number;
  }
}
