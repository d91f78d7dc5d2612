import type { Actor } from './actor';
import type { Operation, Surface } from './types';

/**
 * What happens to an admitted write: it runs now. This is the one place that will decide
 * otherwise (hold an assistant's write for a person's approval, apply one provisionally), so
 * that no surface grows its own rule for it.
 */
export type Disposition = { kind: 'run' };

export function dispositionOf(_actor: Actor, _op: Operation, _surface: Surface): Disposition {
  return { kind: 'run' };
}
