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
  data: {
    app_user_id?: string | null;
    sequence: number;
    prev_hash: string;
    hash: string;
    /** The customer's other ids; absent on events recorded before the service named merged ids. */
    known_as?: string[];
    /** `customer.merged`: the id merged in, and the last `sequence` and `hash` of its own chain, which ends there. */
    merged_app_user_id?: string;
    merged_sequence?: number;
    merged_hash?: string | null;
  } & Record<string, unknown>;
}

/** `GET /customers/{app_user_id}/events`: a page of one chain, and where a merged id's events continue. */
interface EventsPage {
  data: CustomerEvent[];
  pagination: { has_more: boolean };
  merged_into?: { app_user_id: string; sequence: number | null } | null;
}

export const FIRST_PREV_HASH = '0'.repeat(64);

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const EMAIL_IN_VALUE = /[^ \t\n\r\f\v@]+@[^ \t\n\r\f\v@]+\.[^ \t\n\r\f\v@]+/;

/**
 * `data` as its hash covers it: a top-level text field holding an email becomes `<name>_sha256`,
 * the SHA-256 of the value; in a body marked `"proof": 2`, so do `app_user_id`, a merge event's
 * `merged_app_user_id` and each id of `known_as` (as `known_as_sha256`). That is what an erased event stores; other bodies are their
 * own proof form but for those fields.
 */
export function proofForm(data: Record<string, unknown>): Record<string, unknown> {
  const ids = data.proof === 2;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => {
      if (ids && (k === 'app_user_id' || k === 'merged_app_user_id') && typeof v === 'string')
        return [`${k}_sha256`, sha256(v)];
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
  /** Per id merged into another customer, that customer: its events continue there. Persist it too. */
  readonly mergedInto = new Map<string, string>();
  /** Events fetched from the API to fill gaps (for logs and tests). */
  refetched = 0;

  constructor(private readonly opts: { apiUrl: string; secretKey: string }) {}

  /**
   * One delivered event: answers the events to apply now, in order: none for a duplicate or an older
   * one, this one when it follows the last one held, or every missed one up to it, fetched from
   * `GET /customers/{app_user_id}/events?after=N` and checked link by link. The first event about a
   * customer that names (in `known_as`, or as the `customer.merged` event's `merged_app_user_id`) an id
   * this receiver follows: that id's last events, then the customer's from the merge on.
   */
  async receive(event: CustomerEvent): Promise<CustomerEvent[]> {
    const user = event.data.app_user_id;
    if (!user || typeof event.data.sequence !== 'number') return [event]; // not about an app user: no chain
    const applied = this.heads.has(user) ? [] : await this.followMerged(user, event);
    const head = this.heads.get(user) ?? { sequence: 0, hash: FIRST_PREV_HASH };
    if (event.data.sequence <= head.sequence) return applied; // a retry, a replay, a late arrival, or just fetched
    if (event.data.sequence === head.sequence + 1 && links(head.hash, event))
      return [...applied, this.accept(user, event)];
    return [...applied, ...(await this.fill(user, head, event.data.sequence))];
  }

  private accept(user: string, event: CustomerEvent): CustomerEvent {
    this.heads.set(user, { sequence: event.data.sequence, hash: event.data.hash });
    return event;
  }

  private async page(user: string, after: number): Promise<EventsPage> {
    const url = `${this.opts.apiUrl}/customers/${encodeURIComponent(user)}/events?after=${after}&limit=200`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${this.opts.secretKey}` } });
    if (!res.ok) throw new Error(`fetching the events of ${user} after ${after}: HTTP ${res.status}`);
    return (await res.json()) as EventsPage;
  }

  /** Everything after the head up to `upTo`, page by page, each linked to the one before. */
  private async fill(user: string, head: Head, upTo: number): Promise<CustomerEvent[]> {
    const applied: CustomerEvent[] = [];
    let { sequence, hash } = head;
    while (sequence < upTo) {
      const page = await this.page(user, sequence);
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

  /** The rest of `id`'s own events, each checked and applied, and where they continue (`merged_into`). */
  private async rest(id: string, applied: CustomerEvent[]): Promise<EventsPage['merged_into']> {
    for (;;) {
      let { sequence, hash } = this.heads.get(id) ?? { sequence: 0, hash: FIRST_PREV_HASH };
      const page = await this.page(id, sequence);
      for (const e of page.data) {
        if (e.data.sequence <= sequence || !links(hash, e))
          throw new ChainBroken(`event ${e.id} does not follow ${hash}`);
        this.refetched++;
        applied.push(this.accept(id, e));
        ({ sequence, hash } = e.data);
      }
      if (!page.pagination.has_more) return page.merged_into ?? null;
    }
  }

  /**
   * `user`'s first event here names an id this receiver follows that was merged into `user`
   * (docs/event-proofs.md, "Following a merged id"): that id's events to the end of its chain, then
   * each chain it continues on, from its `customer.merged` event (checked against the head it
   * ends), up to `user`'s. Answers what was applied on the way.
   */
  private async followMerged(user: string, event: CustomerEvent): Promise<CustomerEvent[]> {
    const named = [event.data.merged_app_user_id, ...(event.data.known_as ?? [])];
    let current =
      named.find((id): id is string => typeof id === 'string' && this.heads.has(id) && !this.mergedInto.has(id)) ??
      named.find((id): id is string => typeof id === 'string' && this.heads.has(id));
    const applied: CustomerEvent[] = [];
    for (let hops = 0; current !== undefined && current !== user; hops++) {
      if (hops > 10) throw new ChainBroken(`the merges of ${current} do not end`);
      const next = await this.rest(current, applied);
      // Not merged (any more), or merged before merges were events: nothing links; `user`'s chain from its start.
      if (!next || next.sequence === null) return applied;
      const [merge] = (await this.page(next.app_user_id, next.sequence - 1)).data;
      const ended = this.heads.get(current) ?? { sequence: 0, hash: null };
      if (
        merge?.type !== 'customer.merged' ||
        merge.data.merged_app_user_id !== current ||
        merge.data.merged_sequence !== ended.sequence ||
        (merge.data.merged_hash ?? null) !== (ended.sequence ? ended.hash : null) ||
        eventHash(merge.data) !== merge.data.hash
      )
        throw new ChainBroken(`no merge event of ${current} at ${next.app_user_id} ${next.sequence}`);
      this.mergedInto.set(current, next.app_user_id);
      this.refetched++;
      // The customer's chain from the merge on: what came before it is that customer's own past.
      if (!this.heads.has(next.app_user_id)) applied.push(this.accept(next.app_user_id, merge));
      current = next.app_user_id;
    }
    return applied;
  }
}
