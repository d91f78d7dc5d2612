import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OUTBOUND_PORTS,
  effectivePort,
  outboundPortProblem,
  parsePortRanges,
  type PortRange,
} from '../../domain/outbound-ports';
import {
  fairPace,
  MAX_ACTIVE_DRAINS_PER_TENANT,
  runFairly,
  steadyPace,
  storableText,
} from '../../domain/outbound-limits';
import { DRAIN_CONCURRENCY, nextDrainWidth, parkMsFor, slowPauseMs } from '../../activities/outbound-delivery';
import { ConfigError, loadConfig } from '../../runtime/config';

/** The pure rules behind the outbound limits: ports, storable text, the pace, fair turns, the slow-receiver width. */
describe('outbound limits: the rules', () => {
  const defaults = parsePortRanges(DEFAULT_OUTBOUND_PORTS) as PortRange[];

  it('ports: 80, 443 and 1024–65535 by default; a URL without a port is its scheme’s', () => {
    for (const [url, ok] of [
      ['http://example.com/', true],
      ['https://example.com/', true],
      ['http://example.com:443/', true],
      ['https://example.com:8443/h', true],
      ['http://example.com:1024/', true],
      ['http://example.com:65535/', true],
      ['http://example.com:25/', false],
      ['http://example.com:22/', false],
      ['https://example.com:1023/', false],
      ['http://example.com:81/', false],
      ['http://example.com:1/', false],
    ] as const) {
      expect([url, outboundPortProblem(new URL(url), defaults) === null]).toEqual([url, ok]);
    }
    expect(effectivePort(new URL('https://example.com'))).toBe(443);
    expect(outboundPortProblem(new URL('http://example.com:25/'), defaults)).toBe(
      'port 25 is not allowed for webhooks (allowed: 80, 443, 1024–65535)',
    );
  });

  it('the operator’s list (OUTBOUND_WEBHOOK_ALLOWED_PORTS) widens or narrows it; a bad list stops the start, naming the variable', () => {
    const wide = loadConfig({ NODE_ENV: 'test', OUTBOUND_WEBHOOK_ALLOWED_PORTS: '25, 80,443, 1024-65535' })
      .outboundWebhooks.allowedPorts;
    expect(outboundPortProblem(new URL('http://mail.example.com:25/'), wide)).toBeNull();
    expect(loadConfig({ NODE_ENV: 'test' }).outboundWebhooks.allowedPorts).toEqual(defaults);
    for (const bad of ['80,abc', '0-10', '70000', '443-80', ' , ']) {
      expect(() => loadConfig({ NODE_ENV: 'test', OUTBOUND_WEBHOOK_ALLOWED_PORTS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ NODE_ENV: 'test', OUTBOUND_WEBHOOK_ALLOWED_PORTS: bad })).toThrow(
        /OUTBOUND_WEBHOOK_ALLOWED_PORTS/,
      );
    }
  });

  it('storable text: a NUL byte becomes the visible escape, a surrogate cut in half becomes U+FFFD, the rest is kept', () => {
    expect(storableText('a\u0000b', 100)).toBe('a\\u0000b');
    expect(storableText('x'.repeat(10), 4)).toBe('xxxx');
    expect(storableText('ab😀', 3)).toBe('ab\uFFFD');
    expect(storableText('é ✓ 😀 \u0001', 100)).toBe('é ✓ 😀 \u0001');
  });

  it('the pace: a burst of a tenth of a second, then one start per 1/rate', () => {
    const pace = steadyPace(100);
    const waits = Array.from({ length: 30 }, () => pace.take(1_000_000));
    // 100/s: 10 ms apart; the first ~100 ms' worth go at once.
    expect(waits.filter((w) => w === 0).length).toBeGreaterThanOrEqual(10);
    expect(waits.filter((w) => w === 0).length).toBeLessThanOrEqual(11);
    expect(waits.at(-1)).toBeCloseTo(190, 0);
    // After a quiet second the burst is back, not a second's worth of credit.
    const later = Array.from({ length: 30 }, () => pace.take(1_002_000));
    expect(later.filter((w) => w === 0).length).toBeLessThanOrEqual(11);
  });

  it('the fair pace: a key with many starts waiting delays another key’s next start by one start, not by its queue', async () => {
    let now = 0;
    const timers: { at: number; fn: () => void }[] = [];
    const clock = { now: () => now, after: (ms: number, fn: () => void) => void timers.push({ at: now + ms, fn }) };
    const pace = fairPace(10, clock);
    const order: string[] = [];
    const asks = [...Array.from({ length: 20 }, () => 'a'), 'b', 'c'].map((k) =>
      pace.turn(k).then(() => order.push(k)),
    );
    // Run the clock until every start has gone.
    for (let i = 0; i < 100 && order.length < 22; i++) {
      await new Promise((r) => setImmediate(r));
      timers.sort((x, y) => x.at - y.at);
      const t = timers.shift();
      if (!t) continue;
      now = t.at;
      t.fn();
    }
    await Promise.all(asks);
    // 10/s: one start at once (the burst after a pause), then 100 ms apart; b and c are 2nd and 3rd, not 21st and 22nd.
    expect(order.indexOf('b')).toBeLessThanOrEqual(2);
    expect(order.indexOf('c')).toBeLessThanOrEqual(3);
    expect(order.filter((k) => k === 'a')).toHaveLength(20);
    expect(now).toBeGreaterThanOrEqual(1900);
  });

  it('fair turns: one key with many items neither fills the slots nor goes before another key’s first', async () => {
    const items = [...Array.from({ length: 20 }, (_, i) => ({ k: 'a', i })), { k: 'b', i: 0 }, { k: 'c', i: 0 }];
    const started: string[] = [];
    let running = 0;
    let most = 0;
    const perKey = new Map<string, number>();
    let mostPerKey = 0;
    await runFairly(
      items,
      (x) => x.k,
      { total: 6, perKey: 2 },
      async (x) => {
        started.push(x.k);
        running++;
        perKey.set(x.k, (perKey.get(x.k) ?? 0) + 1);
        most = Math.max(most, running);
        mostPerKey = Math.max(mostPerKey, perKey.get(x.k)!);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        perKey.set(x.k, perKey.get(x.k)! - 1);
      },
    );
    expect(started).toHaveLength(22);
    expect(started.slice(0, 3).sort()).toEqual(['a', 'b', 'c']);
    expect(most).toBeLessThanOrEqual(6);
    expect(mostPerKey).toBe(2);
    await runFairly(
      [],
      () => 'x',
      { total: 2, perKey: 1 },
      async () => undefined,
    );
  });

  it('slow receivers: the width halves after a slow round down to 1 and grows back one at a time; the pause grows as it narrows', () => {
    let w = DRAIN_CONCURRENCY;
    const widths = [];
    for (let i = 0; i < 5; i++) widths.push((w = nextDrainWidth(w, true)));
    expect(widths).toEqual([4, 2, 1, 1, 1]);
    expect([nextDrainWidth(1, false), nextDrainWidth(DRAIN_CONCURRENCY, false)]).toEqual([2, DRAIN_CONCURRENCY]);
    expect(slowPauseMs(1)).toBeGreaterThan(slowPauseMs(4));
    expect(slowPauseMs(1)).toBeLessThanOrEqual(30_000);
    // Parked further back in line, a drain looks again later.
    expect(parkMsFor(0)).toBe(parkMsFor(MAX_ACTIVE_DRAINS_PER_TENANT - 1));
    expect(parkMsFor(MAX_ACTIVE_DRAINS_PER_TENANT)).toBeGreaterThan(parkMsFor(0));
    expect(parkMsFor(1000)).toBeLessThanOrEqual(32_000);
  });
});
