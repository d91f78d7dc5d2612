import type { Actor } from './actor';
import type { Operation, Surface } from './types';

/**
 * What happens to an admitted write: it runs now, or it is held for a person's approval
 * (docs/approvals.md) when the key that asked requires approval. This is the one place that
 * decides, so that no surface grows its own rule for it. A write a person approved runs with the
 * key as its actor again, marked approved: it is never held twice.
 */
export type Disposition = { kind: 'run' } | { kind: 'hold' };

export function dispositionOf(actor: Actor, op: Operation, _surface: Surface): Disposition {
  if (op.write && actor.kind === 'api_key' && actor.requireApproval && !actor.approvedChange) return { kind: 'hold' };
  // An assistant whose person chose "writes wait for approval" (docs/assistant-sign-in.md).
  if (op.write && actor.kind === 'assistant' && actor.holdWrites && !actor.approvedChange) return { kind: 'hold' };
  return { kind: 'run' };
}
