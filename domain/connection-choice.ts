/**
 * Which of a provider's connections speaks for the tenant when no account is named: the
 * account's default, else the first active one, else the first. Input order is creation order.
 */
export function speakingConnection<C extends { is_default: boolean; is_active: boolean }>(connections: readonly C[]): C | undefined {
  return connections.find((c) => c.is_default) ?? connections.find((c) => c.is_active) ?? connections[0];
}
