import { describe, expect, it } from 'vitest';
import {
  INTERVALS,
  offsetMinutes,
  parseRunWorkflowId,
  reconciliationScheduleId,
} from '../../domain/reconciliation-schedule';

const T = '8ff9f67c-8f89-476b-a1de-f077bd01a562';

describe('reconciliation schedule rules', () => {
  it('a run names its tenant and group by its id (the schedule id plus its time); nothing else does', () => {
    expect(parseRunWorkflowId(`${reconciliationScheduleId(T, 'web')}-2026-11-26T04:00:00Z`)).toEqual({
      tenantId: T,
      group: 'web',
    });
    expect(parseRunWorkflowId(`${reconciliationScheduleId(T, 'stores')}-2026-11-26T04:00:00Z`)).toEqual({
      tenantId: T,
      group: 'stores',
    });
    for (const bad of [
      `reconcile-${T}-webhooks-x`,
      `reconcile-${T.toUpperCase()}-web-x`,
      `refresh-${T}-web`,
      `reconcile-not-a-uuid-web-x`,
      `xreconcile-${T}-web-x`,
    ])
      expect([bad, parseRunWorkflowId(bad)]).toEqual([bad, null]);
  });

  it('the offset spreads tenants within the interval and is the same on every call', () => {
    for (const m of [INTERVALS.web.min, INTERVALS.web.default, INTERVALS.stores.max]) {
      const o = offsetMinutes(T, m);
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(m);
      expect(offsetMinutes(T, m)).toBe(o);
    }
    const spread = new Set(
      Array.from({ length: 50 }, (_, i) => offsetMinutes(`${T.slice(0, -2)}${String(i).padStart(2, '0')}`, 60)),
    );
    expect(spread.size).toBeGreaterThan(10);
  });

  it('defaults sit inside their bounds: hourly for web providers, daily for stores', () => {
    expect(INTERVALS.web.default).toBe(60);
    expect(INTERVALS.stores.default).toBe(1440);
    for (const g of Object.values(INTERVALS)) expect(g.min <= g.default && g.default <= g.max).toBe(true);
  });
});
