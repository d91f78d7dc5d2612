import { limitOf, pacingRule, rateKey, SlidingWindow, type CallKind, type Pace } from '../domain/rate-limits';
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
 * run stop calling too, instead of each collecting its own 429, and its margin widens for a while.
 *
 * Several worker processes each pace to the full limit; the 429 path (retry after the delay)
 * covers the excess. One worker per deployment keeps to the limit exactly.
 */
export interface Pacer {
  /**
   * The function a ProviderContext calls before each HTTP request. `lookup`: a store's purchase
   * lookup, on the allowance Apple's Server API gives it (domain/rate-limits.ts LOOKUP_LIMITS).
   */
  pace(provider: ProviderId, mode: Mode, accountRef: string, kind?: CallKind): (endpoint?: string) => Promise<void>;
  /** The provider answered 429: nobody calls it on this allowance for `ms`. */
  holdOff(provider: ProviderId, mode: Mode, accountRef: string, ms: number, kind?: CallKind): void;
}

interface Gate {
  window: Pace;
  tail: Promise<void>;
  heldUntil: number;
  /**
   * Margin learnt from 429s on a per-second limit: arrivals bunched more than we allowed for (a
   * loaded machine, a slow network). +50 ms per 429 up to 200 ms, back down 50 ms after each
   * 15 s without one, so one bad moment does not slow the rest of the run.
   */
  extraMs: number;
  lastWidened: number;
  docWindowMs: number;
}

const STEP_MS = 50;
const MAX_EXTRA_MS = 200;
const QUIET_MS = 15_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createPacer(opts: { marginMs?: number; now?: () => number } = {}): Pacer {
  const now = opts.now ?? Date.now;
  const base = opts.marginMs ?? 50;
  const gates = new Map<string, Gate>();

  const gateOf = (
    provider: ProviderId,
    mode: Mode,
    accountRef: string,
    kind: CallKind = 'default',
    endpoint?: string,
  ): Gate => {
    const key = rateKey(provider, mode, accountRef, kind, endpoint);
    let g = gates.get(key);
    if (!g) {
      const r = limitOf(provider, mode, kind);
      g = {
        window: pacingRule(r, base),
        docWindowMs: r.windowMs,
        tail: Promise.resolve(),
        heldUntil: 0,
        extraMs: 0,
        lastWidened: 0,
      };
      gates.set(key, g);
    }
    return g;
  };

  /** Only a per-second limit's sliding window takes a margin; its recorded calls stay. */
  const setExtra = (g: Gate, extraMs: number) => {
    g.extraMs = extraMs;
    if (g.window instanceof SlidingWindow) g.window.windowMs = g.docWindowMs + base + extraMs;
  };

  return {
    pace(provider, mode, accountRef, kind) {
      return (endpoint) => {
        const g = gateOf(provider, mode, accountRef, kind, endpoint);
        const turn = g.tail.then(async () => {
          for (;;) {
            const t = now();
            if (g.heldUntil > t) {
              await sleep(g.heldUntil - t);
              continue;
            }
            if (g.extraMs > 0 && t - g.lastWidened > QUIET_MS) {
              setExtra(g, g.extraMs - STEP_MS);
              g.lastWidened = t;
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

    holdOff(provider, mode, accountRef, ms, kind) {
      // A lookup allowance kept per endpoint: the 429 does not say which, so every endpoint's waits.
      const prefix = rateKey(provider, mode, accountRef, kind);
      const held = prefix.endsWith(':')
        ? [...gates].filter(([k]) => k.startsWith(prefix)).map(([, g]) => g)
        : [gateOf(provider, mode, accountRef, kind)];
      const t = now();
      for (const g of held) {
        g.heldUntil = Math.max(g.heldUntil, t + ms);
        setExtra(g, Math.min(MAX_EXTRA_MS, g.extraMs + STEP_MS));
        g.lastWidened = t;
      }
    },
  };
}
