import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'vitest';

/**
 * A customer's hash chain checked independently of the service (docs/event-proofs.md): the
 * `canonicalize` package's RFC 8785 and Node's SHA-256, never the service's or the example
 * receiver's code.
 */
export const ZERO_HASH = '0'.repeat(64);
export const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

const EMAIL = /[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+/;

/**
 * An event's proof form as docs/event-proofs.md states it: an email in a top-level field as
 * `<name>_sha256`; in a body marked `"proof": 2`, `app_user_id`, `merged_app_user_id` and each id
 * of `known_as` too.
 */
export function proofForm(data: Record<string, unknown>): Record<string, unknown> {
  const ids = data.proof === 2;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) =>
      (ids && (k === 'app_user_id' || k === 'merged_app_user_id')) || (typeof v === 'string' && EMAIL.test(v))
        ? [`${k}_sha256`, sha256(v as string)]
        : ids && k === 'known_as'
          ? [`${k}_sha256`, (v as string[]).map(sha256)]
          : [k, v],
    ),
  );
}

/** The hash of `data` (without `hash`) as a receiver recomputes it. */
export const proofHash = (rest: Record<string, unknown>) => sha256(canonicalize(proofForm(rest))!);

/**
 * Each event's `hash` covers its `data` without `hash`, in the proof form (an erased field is
 * already `<name>_sha256` in the body as stored); each `prev_hash` is the previous `hash` (`from`:
 * the hash before the first, 64 zeros for a chain read from its start) and each `sequence` the
 * previous one plus one. A `redacted` body (erased before its ids were in the proof form) is held
 * to its link only; `redacted` says how many the chain must hold.
 */
export function verifyChain(
  events: Array<{ redacted?: boolean; data: Record<string, unknown> }>,
  { from = ZERO_HASH, redacted = 0 }: { from?: string; redacted?: number } = {},
): void {
  let prev = from;
  let seq: number | undefined;
  for (const e of events) {
    const { hash, ...rest } = e.data;
    expect(rest.prev_hash).toBe(prev);
    if (seq !== undefined) expect(rest.sequence).toBe(seq + 1);
    if (!e.redacted) expect(hash).toBe(proofHash(rest));
    prev = hash as string;
    seq = rest.sequence as number;
  }
  expect(events.filter((e) => e.redacted).length).toBe(redacted);
}
