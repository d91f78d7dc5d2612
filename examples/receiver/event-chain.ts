import crypto from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * A receiver of the billing service's outbound events that proves it holds every event about each
 * app user, and fills any gap by asking the API for what it missed (docs/event-proofs.md).
 * Copy it into your backend: it needs Node's crypto, an RFC 8785 implementation (`canonicalize`
 * on npm) and `fetch`.
 *
 *   const chains = new EventChains({ apiUrl: 'https://billing.example.com/v1', secretKey });
 *   // in your webhook handler, after verifying the signature:
 *   for (const event of await chains.receive(body)) apply(event); // in order, none missing
 */

export interface CustomerEvent {
  id: string;
  type: string;
  version: number;
  timestamp: string;
  /** An erased event recorded before its ids were part of the proof form: its `hash` is as recorded (docs). */
  redacted?: boolean;
  data: { app_user_id?: string | null; sequence: number; prev_hash: string; hash: string } & Record<string, unknown>;
}

export const FIRST_PREV_HASH = '0'.repeat(64);

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const EMAIL_IN_VALUE = /[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+/;

/**
 * `data` as its hash covers it: a top-level text field holding an email becomes `<name>_sha256`,
 * the SHA-256 of the value; in a body marked `"proof": 2`, so do `app_user_id` and each id of
 * `known_as` (as `known_as_sha256`). That is what an erased event stores; other bodies are their
 * own proof form but for those fields.
 */
export function proofForm(data: Record<string, unknown>): Record<string, unknown> {
  const ids = data.proof === 2;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => {
      if (ids && k === 'app_user_id' && typeof v === 'string') return [`${k}_sha256`, sha256(v)];
      if (ids && k === 'known_as' && Array.isArray(v)) return [`${k}_sha256`, v.map((x) => sha256(String(x)))];
      return typeof v === 'string' && EMAIL_IN_VALUE.test(v) ? [`${k}_sha256`, sha256(v)] : [k, v];
    }),
  );
}

/** `hash` as the service computes it: hex SHA-256 of the RFC 8785 canonical JSON of the proof form of `data` without `hash`. */
export function eventHash(data: Record<string, unknown>): string {
  const { hash: _hash, ...rest } = data;
  return sha256(canonicalize(proofForm(rest))!);
}

/**
 * Whether `event` is intact and follows the event whose hash is `prevHash`. A `redacted` event (erased,
 * recorded before its ids were in the proof form) is taken at its recorded `hash`: the next event's
 * `prev_hash` and the signed digest still commit to it.
 */
export function links(prevHash: string, event: CustomerEvent): boolean {
  return event.data.prev_hash === prevHash && (event.redacted === true || eventHash(event.data) === event.data.hash);
}

export class ChainBroken extends Error {}

interface Head {
  sequence: number;
  hash: string;
}

export class EventChains {
  /** Per app user, the last event applied. Persist it in your database in a real receiver. */
  readonly heads = new Map<string, Head>();
  /** Events fetched from the API to fill gaps (for logs and tests). */
  refetched = 0;

  constructor(private readonly opts: { apiUrl: string; secretKey: string }) {}

  /**
   * One delivered event: answers the events to apply now, in order: none for a duplicate or an older
   * one, this one when it follows the last one held, or every missed one up to it, fetched from
   * `GET /customers/{app_user_id}/events?after=N` and checked link by link.
   */
  async receive(event: CustomerEvent): Promise<CustomerEvent[]> {
    const user = event.data.app_user_id;
    if (!user || typeof event.data.sequence !== 'number') return [event]; // not about an app user: no chain
    const head = this.heads.get(user) ?? { sequence: 0, hash: FIRST_PREV_HASH };
    if (event.data.sequence <= head.sequence) return []; // a retry, a replay or a late arrival
    if (event.data.sequence === head.sequence + 1 && links(head.hash, event)) return [this.accept(user, event)];
    return this.fill(user, head, event.data.sequence);
  }

  private accept(user: string, event: CustomerEvent): CustomerEvent {
    this.heads.set(user, { sequence: event.data.sequence, hash: event.data.hash });
    return event;
  }

  /** Everything after the head up to `upTo`, page by page, each linked to the one before. */
  private async fill(user: string, head: Head, upTo: number): Promise<CustomerEvent[]> {
    const applied: CustomerEvent[] = [];
    let { sequence, hash } = head;
    while (sequence < upTo) {
      const url = `${this.opts.apiUrl}/customers/${encodeURIComponent(user)}/events?after=${sequence}&limit=200`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${this.opts.secretKey}` } });
      if (!res.ok) throw new Error(`fetching the events of ${user} after ${sequence}: HTTP ${res.status}`);
      const page = (await res.json()) as { data: CustomerEvent[]; pagination: { has_more: boolean } };
      if (!page.data.length) break;
      for (const e of page.data) {
        // A skipped number is a transaction that rolled back: nothing was sent. The hashes must still link.
        if (e.data.sequence <= sequence || !links(hash, e))
          throw new ChainBroken(`event ${e.id} does not follow ${hash}`);
        this.refetched++;
        applied.push(this.accept(user, e));
        ({ sequence, hash } = e.data);
        if (sequence >= upTo) break;
      }
      if (!page.pagination.has_more) break;
    }
    if (sequence < upTo) throw new ChainBroken(`the service has no event ${upTo} for ${user}`);
    return applied;
  }
}
