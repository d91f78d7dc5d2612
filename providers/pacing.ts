import { pacingRule, rateKey, rateLimitOf, type Pace } from '../domain/rate-limits';
import type { Mode, ProviderId } from '../domain/providers';

/**
 * Paces calls to each provider to its documented rate limit (domain/rate-limits.ts), one
 * allowance per provider, mode and account (per mode only where the provider counts per IP),
 * shared by every activity of this worker process. Callers queue first in, first out; each
 * waits only when the window is full.
 *
 * How (domain/rate-limits.ts pacingRule): a per-second limit as the same sliding window, a
 * little longer than the provider's, since requests leave here in order but arrive a few ms
 * apart from how they left and a limit counted on arrival must still hold; a per-minute or
 * per-hour limit as a steady rate with a small burst, so no call waits long for its turn.
 * After a 429 the allowance is held for the provider's Retry-After, so the other activities of the
 * run stop calling too, instead of each collecting its own 429, and its margin widens.
 *
 * Several worker processes each pace to the full limit; the 429 path (retry after the delay)
 * covers the excess. One worker per deployment keeps to the limit exactly.
 */
export interface Pacer {
  /** The function a ProviderContext calls before each HTTP request. */
  pace(provider: ProviderId, mode: Mode, accountRef: string): () => Promise<void>;
  /** The provider answered 429: nobody calls it on this allowance for `ms`. */
  holdOff(provider: ProviderId, mode: Mode, accountRef: string, ms: number): void;
}

interface Gate {
  window: Pace;
  tail: Promise<void>;
  heldUntil: number;
  /** Extra ms of margin learnt from 429s: arrivals bunch more than we allowed for (a loaded machine, a slow network). */
  extraMs: number;
}

const MAX_EXTRA_MS = 400;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createPacer(opts: { marginMs?: number; now?: () => number } = {}): Pacer {
  const now = opts.now ?? Date.now;
  const gates = new Map<string, Gate>();

  const gateOf = (provider: ProviderId, mode: Mode, accountRef: string): Gate => {
    const key = rateKey(provider, mode, accountRef);
    let g = gates.get(key);
    if (!g) {
      g = { window: pacingRule(rateLimitOf(provider, mode), opts.marginMs ?? 50), tail: Promise.resolve(), heldUntil: 0, extraMs: 0 };
      gates.set(key, g);
    }
    return g;
  };

  return {
    pace(provider, mode, accountRef) {
      const g = gateOf(provider, mode, accountRef);
      return () => {
        const turn = g.tail.then(async () => {
          for (;;) {
            const t = now();
            if (g.heldUntil > t) {
              await sleep(g.heldUntil - t);
              continue;
            }
            const wait = g.window.take(t);
            if (wait === 0) return;
            await sleep(wait);
          }
        });
        g.tail = turn;
        return turn;
      };
    },

    holdOff(provider, mode, accountRef, ms) {
      const g = gateOf(provider, mode, accountRef);
      g.heldUntil = Math.max(g.heldUntil, now() + ms);
      // A 429 despite pacing a per-second limit: widen the margin (doubling, up to 400 ms). The
      // new window starts empty, which is safe: the hold (≥ 1 s) outlasts the window.
      const r = rateLimitOf(provider, mode);
      if (r.windowMs <= 1000 && ms >= r.windowMs) {
        g.extraMs = Math.min(MAX_EXTRA_MS, g.extraMs ? g.extraMs * 2 : 50);
        g.window = pacingRule(r, (opts.marginMs ?? 50) + g.extraMs);
      }
    },
  };
}
