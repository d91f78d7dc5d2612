import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../operations';
import type { KeyActor, OperatorActor, UserActor } from '../../operations/actor';
import { refusalFor } from '../../operations/policy';

/** The admin CLI's actor (operations/actor.ts): the operator runs any operation, on the CLI only. */
describe('the operator in the policy (operations/policy.ts)', () => {
  const operator: OperatorActor = { kind: 'operator', tenantId: 't' };
  const owner: UserActor = { kind: 'user', tenantId: 't', userId: 'u', role: 'owner' };
  const key: KeyActor = { kind: 'api_key', tenantId: 't', keyId: 'k', keyName: 'k', scopes: [], expiresAt: null };

  it('runs every operation on the CLI, account operations included', () => {
    expect(OPERATIONS.filter((op) => refusalFor(operator, op, 'cli') !== undefined).map((op) => op.name)).toEqual([]);
  });

  it('is refused on every other surface, and nobody else runs anything on the CLI', () => {
    for (const op of OPERATIONS) {
      for (const surface of ['rest', 'tool', 'dashboard'] as const)
        expect([op.name, surface, refusalFor(operator, op, surface)?.status]).toEqual([op.name, surface, 403]);
      expect([op.name, refusalFor(owner, op, 'cli')?.status, refusalFor(key, op, 'cli')?.status]).toEqual([
        op.name,
        403,
        403,
      ]);
    }
  });
});
