import { describe, expect, it } from 'vitest';
import { orderingGroups, runGrouped } from '../../domain/import-concurrency';

/** A promise the test resolves by hand: no clock, the order is what the test lets happen. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { p, open };
}

describe('import page concurrency', () => {
  it('groups items sharing any key (the same customer or the same purchase), transitively', () => {
    const rows = [
      { u: 'a', ref: 'p1' },
      { u: 'b', ref: 'p2' },
      { u: 'a', ref: 'p3' },
      { u: 'c', ref: 'p2' },
      { u: 'd', ref: 'p4' },
    ];
    const g = orderingGroups(rows, (r) => [`u:${r.u}`, `p:${r.ref}`]);
    expect(g[0]).toBe(g[2]);
    expect(g[1]).toBe(g[3]);
    expect(new Set(g).size).toBe(3);
  });

  it('runs different groups side by side, one group in order, never more than the width', async () => {
    const items = ['a1', 'b1', 'a2', 'c1', 'b2', 'a3'];
    const groups = items.map((x) => x[0]);
    const gates = new Map(items.map((x) => [x, gate()]));
    const started: string[] = [];
    let inFlight = 0;
    let peak = 0;
    const run = runGrouped(items, groups, 2, async (x) => {
      started.push(x);
      peak = Math.max(peak, ++inFlight);
      await gates.get(x)!.p;
      inFlight--;
    });
    await Promise.resolve();
    expect(started).toEqual(['a1', 'b1']);
    gates.get('a1')!.open();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a1', 'b1', 'c1']); // a2 waits for nothing but its turn; c1 was next in the rotation
    for (const x of items) gates.get(x)!.open();
    await run;
    expect(peak).toBe(2);
    for (const k of ['a', 'b']) {
      const mine = started.filter((x) => x[0] === k);
      expect(mine).toEqual([...mine].sort());
    }
    expect(started.sort()).toEqual([...items].sort());
  });

  it('on a failure starts nothing new and throws once the items in flight settle', async () => {
    const items = [1, 2, 3, 4, 5, 6];
    const done: number[] = [];
    const slow = gate();
    const run = runGrouped(items, items.map(String), 2, async (n) => {
      if (n === 1) throw new Error('boom');
      if (n === 2) await slow.p;
      done.push(n);
    });
    let settled = false;
    void run.catch(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false); // item 2 is still in flight
    slow.open();
    await expect(run).rejects.toThrow('boom');
    expect(done).toEqual([2]);
  });
});
