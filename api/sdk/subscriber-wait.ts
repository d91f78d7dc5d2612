import type { ParsedUrlQuery } from 'node:querystring';
import { invalidRequest } from '../../operations/errors';
import type { Services } from '../../operations/services';
import type { AppActor } from './auth';
import { MAX_WAIT_MS, entitlementWaits } from './entitlement-waits';

/** `?wait_for=premium[&timeout_ms=N]`: how long to hold the read until the app user is premium. Null: a plain read. */
export function parseWait(query: ParsedUrlQuery): { timeoutMs: number } | null {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw invalidRequest(`${name} may be given once`, name);
    return v;
  };
  const waitFor = one('wait_for');
  const timeout = one('timeout_ms');
  if (waitFor === undefined) {
    if (timeout !== undefined) throw invalidRequest('timeout_ms needs wait_for=premium', 'wait_for');
    return null;
  }
  if (waitFor !== 'premium') throw invalidRequest('wait_for must be "premium"', 'wait_for');
  if (timeout === undefined) return { timeoutMs: MAX_WAIT_MS };
  if (!/^\d{1,9}$/.test(timeout))
    throw invalidRequest(
      `timeout_ms must be an integer number of milliseconds, 0–${MAX_WAIT_MS} (larger values are clamped)`,
      'timeout_ms',
    );
  // Clamped like `limit` on lists: a longer ask is served the longest wait there is.
  return { timeoutMs: Math.min(Number(timeout), MAX_WAIT_MS) };
}

/**
 * One read of a held check: what is answered, whether it is premium, and every id the customer is
 * known by (the id asked about, the one it is an alias of, that one's aliases): the wait wakes on
 * a write under any of them.
 */
export interface HeldRead<T> {
  answer: T;
  premium: boolean;
  customerIds: readonly string[];
}

/**
 * The answer once the customer is premium, or at `timeoutMs` whatever is true then. The slot is
 * taken before the first read, so a change committed between that read and the wait is not missed
 * (it is pending when the wait starts); each read tells the slot the customer's ids, and a write
 * under one of them notified while the read was under way counts as such a change too. Each
 * wake-up re-reads through the caller's own tenant transaction; the timeout re-reads once more
 * (the fallback when a notification never came). Null when the client went away.
 */
export async function waitForPremium<T>(
  services: Services,
  actor: AppActor,
  appUserId: string,
  address: string,
  timeoutMs: number,
  signal: AbortSignal,
  // What is read each time: the subscriber answer, or what the token endpoint builds on the same read.
  read: () => Promise<HeldRead<T>>,
): Promise<T | null> {
  const waits = entitlementWaits(services);
  // A process that started no listener (work starts with the process, never on first use) answers at once.
  if (!waits) return (await read()).answer;
  const slot = waits.enter(actor.tenantId, appUserId, address);
  const look = async () => {
    slot.reading();
    const r = await read();
    slot.follow(r.customerIds);
    return r;
  };
  try {
    const deadline = Date.now() + timeoutMs;
    let r = await look();
    while (!r.premium) {
      const outcome = await slot.next(deadline - Date.now(), signal);
      if (outcome === 'aborted') return null;
      r = await look();
      if (outcome === 'timeout' || Date.now() >= deadline) break;
    }
    return r.answer;
  } finally {
    slot.leave();
  }
}
