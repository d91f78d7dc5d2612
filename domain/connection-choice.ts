/**
 * Which provider connection an app uses, when the caller may or may not name one. Pure: the
 * caller (db/connections.ts) loads the tenant's connections and turns a refusal into its error.
 *
 *   account_id given  → the active connection whose id or provider account id matches, else not_found;
 *   omitted           → the provider's default, else the only active connection,
 *                       else ambiguous_connection listing the candidates.
 */
import type { ProviderId } from './providers';

export interface ConnectionOption {
  id: string;
  label: string;
  account_ref: string;
  is_default: boolean;
  is_active: boolean;
}

export type ConnectionChoice<C extends ConnectionOption> =
  | { ok: true; connection: C }
  | { ok: false; code: 'no_connection' | 'not_found' | 'ambiguous_connection'; message: string; candidates: C[] };

export function chooseConnection<C extends ConnectionOption>(
  connections: readonly C[],
  provider: ProviderId,
  accountId?: string,
): ConnectionChoice<C> {
  const active = connections.filter((c) => c.is_active);
  if (active.length === 0) {
    return {
      ok: false,
      code: 'no_connection',
      message: `no ${provider} connection on this account: connect ${provider} in the dashboard first`,
      candidates: [],
    };
  }
  if (accountId !== undefined) {
    // account_id may be our connection id or the provider's own account id (account_ref).
    const hit = active.find((c) => c.id === accountId || c.account_ref === accountId);
    if (hit) return { ok: true, connection: hit };
    return {
      ok: false,
      code: 'not_found',
      message: `no active ${provider} connection matches account_id; candidates: ${describeCandidates(active)}`,
      candidates: active,
    };
  }
  const def = active.find((c) => c.is_default);
  if (def) return { ok: true, connection: def };
  if (active.length === 1) return { ok: true, connection: active[0] };
  return {
    ok: false,
    code: 'ambiguous_connection',
    message: `${active.length} ${provider} connections and none is the default: pass account_id (one of ${describeCandidates(active)}) or mark one default`,
    candidates: active,
  };
}

export function describeCandidates(list: readonly ConnectionOption[]): string {
  if (list.length === 0) return 'none';
  return list.map((c) => `${c.id}${c.label ? ` "${c.label}"` : ''} (${c.account_ref})`).join(', ');
}

/**
 * Which of a provider's connections speaks for the tenant when no account is named (readiness,
 * drift, sync): the account's default, else the first active one, else the first. Input order
 * is creation order.
 */
export function speakingConnection<C extends { is_default: boolean; is_active: boolean }>(
  connections: readonly C[],
): C | undefined {
  return connections.find((c) => c.is_default) ?? connections.find((c) => c.is_active) ?? connections[0];
}
