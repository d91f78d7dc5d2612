/**
 * Bounds on how long a client may hold a connection. Node's defaults let a request trickle in
 * for 300 s (a byte every 10 s kept one open past 95 s), so a few hundred slow clients could
 * hold every socket: each bound below ends such a connection, maxConnections caps how many
 * exist at once (further ones are dropped on accept), and maxConnectionsPerAddress caps one
 * client's share of them (IPv6 by /64), so one client cannot hold them all.
 */
export interface HttpLimits {
  /** Whole request, headers and body, from the first byte (answered 408, then closed). */
  requestTimeoutMs: number;
  /** Headers complete, from the connection (or the previous response on keep-alive). */
  headersTimeoutMs: number;
  /** Idle keep-alive connection between requests. Behind a load balancer, keep its idle timeout below this. */
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /**
   * Open connections one client address may hold (domain/client-address-key.ts: IPv6 counts by /64);
   * further ones are dropped on accept. 0 = no per-address cap. A trusted proxy's own connections
   * (TRUSTED_PROXIES) are not capped: it carries everyone, and limits its clients itself.
   */
  maxConnectionsPerAddress: number;
}

/** The per-address share when HTTP_MAX_CONNECTIONS_PER_ADDRESS is unset: a tenth of the listener's cap. */
export const perAddressShare = (maxConnections: number) => Math.ceil(maxConnections / 10);

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 10_000,
  maxConnections: 2_000,
  maxConnectionsPerAddress: perAddressShare(2_000),
};
