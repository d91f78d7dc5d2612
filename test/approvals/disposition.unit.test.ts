import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../operations';
import type { KeyActor, UserActor } from '../../operations/actor';
import { dispositionOf } from '../../operations/disposition';

/** operations/disposition.ts: the one rule that holds a write for a person (docs/approvals.md). */
describe('disposition', () => {
  const key: KeyActor = {
    kind: 'api_key',
    tenantId: 't',
    keyId: 'k',
    keyName: '',
    scopes: [],
    expiresAt: null,
    requireApproval: true,
  };
  const person: UserActor = { kind: 'user', tenantId: 't', userId: 'u', role: 'owner' };

  it('holds every write of a key that requires approval, and nothing else', () => {
    for (const op of OPERATIONS) {
      expect([op.name, dispositionOf(key, op, 'tool').kind]).toEqual([op.name, op.write ? 'hold' : 'run']);
      expect([op.name, dispositionOf({ ...key, requireApproval: false }, op, 'rest').kind]).toEqual([op.name, 'run']);
      expect([op.name, dispositionOf(person, op, 'dashboard').kind]).toEqual([op.name, 'run']);
    }
  });

  it('runs the write a person approved (never held twice)', () => {
    const approved = { ...key, approvedChange: { changeId: 'c', userId: 'u' } };
    for (const op of OPERATIONS.filter((o) => o.write)) expect(dispositionOf(approved, op, 'tool').kind).toBe('run');
  });
});
