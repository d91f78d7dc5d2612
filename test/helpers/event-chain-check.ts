import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'vitest';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

const EMAIL = /[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+/;

/**
 * An event's proof form as docs/event-proofs.md states it, written apart from the service's and the
 * example receiver's: an email in a top-level field as `<name>_sha256`; in a body marked
 * `"proof": 2`, `app_user_id` and each id of `known_as` too.
 */
export function proofForm(data: Record<string, unknown>): Record<string, unknown> {
  const ids = data.proof === 2;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) =>
      (ids && k === 'app_user_id') || (typeof v === 'string' && EMAIL.test(v))
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
 * The chain checked independently of the service: RFC 8785 (`canonicalize`) and Node's SHA-256 over
 * the body as stored, where an erased field is already `<name>_sha256`, and in a body marked
 * `"proof": 2` the ids and any email are hashed under that name first (docs/event-proofs.md,
 * "Erasure"). A `redacted` body is held to its link only; `redacted` counts them.
 */
export function verifyChain(events: Array<{ redacted?: boolean; data: Record<string, unknown> }>, redacted = 0): void {
  let prev = '0'.repeat(64);
  for (const e of events) {
    const { hash, ...rest } = e.data;
    const proof = proofForm(rest);
    expect(rest.prev_hash).toBe(prev);
    if (!e.redacted) expect(hash).toBe(sha256(canonicalize(proof)!));
    prev = hash as string;
  }
  expect(events.filter((e) => e.redacted).length).toBe(redacted);
}
