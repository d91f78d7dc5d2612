import crypto from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'vitest';

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

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
    const ids = rest.proof === 2;
    const proof = Object.fromEntries(
      Object.entries(rest).map(([k, v]) =>
        (ids && k === 'app_user_id') ||
        (typeof v === 'string' && /[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+/.test(v))
          ? [`${k}_sha256`, sha256(v as string)]
          : ids && k === 'known_as'
            ? [`${k}_sha256`, (v as string[]).map(sha256)]
            : [k, v],
      ),
    );
    expect(rest.prev_hash).toBe(prev);
    if (!e.redacted) expect(hash).toBe(sha256(canonicalize(proof)!));
    prev = hash as string;
  }
  expect(events.filter((e) => e.redacted).length).toBe(redacted);
}
