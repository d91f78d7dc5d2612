import { mayManageAccount, roleHasScope } from '../domain/roles';
import type { Actor } from './actor';
import { ApiError, insufficientScope } from './errors';
import { dashboardOnly, type Operation, type Surface } from './types';

/**
 * Who may run what: the one check every operation passes first, whatever the surface. A key
 * needs the operation's scope; a person needs a role that carries it; an account operation
 * (keys, credentials) is a person's in the dashboard only, or the operator's in the admin CLI.
 * The operator runs the installation: any operation, on the admin CLI only. Answers the
 * refusal, or undefined.
 */
export function refusalFor(actor: Actor, op: Operation, surface: Surface): ApiError | undefined {
  if (actor.kind === 'operator' || surface === 'cli')
    return actor.kind === 'operator' && surface === 'cli'
      ? undefined
      : new ApiError(403, 'insufficient_scope', 'Only the operator runs the admin CLI.');
  if (dashboardOnly(op)) {
    if (actor.kind !== 'user' || surface !== 'dashboard')
      return new ApiError(403, 'insufficient_scope', 'This can be done only by a signed-in person in the dashboard.');
    return mayManageAccount(actor.role, op.accountArea ?? 'credentials') ? undefined : forbiddenForRole();
  }
  const scope = op.scope as Exclude<Operation['scope'], 'account'>;
  if (actor.kind === 'api_key')
    return actor.scopes.includes(scope) || op.ownRecords ? undefined : insufficientScope(scope);
  // An assistant: the role its person gave it, within the person's role now (docs/assistant-sign-in.md).
  if (actor.kind === 'assistant') return actor.scopes.includes(scope) ? undefined : forbiddenForAssistant();
  return roleHasScope(actor.role, scope) ? undefined : forbiddenForRole();
}

const forbiddenForAssistant = () =>
  new ApiError(
    403,
    'insufficient_scope',
    'The person who connected this assistant did not give it this (their role, or what they chose at consent, does not allow it).',
  );

export const forbiddenForRole = () =>
  new ApiError(403, 'insufficient_scope', 'Your role in this account does not allow this; ask an owner or an admin.');
