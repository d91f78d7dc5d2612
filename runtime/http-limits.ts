/**
 * Bounds on how long a client may hold a connection. Node's defaults let a request trickle in
 * for 300 s (a byte every 10 s kept one open past 95 s), so a few hundred slow clients could
 * hold every socket: each bound below ends such a connection, and maxConnections caps how many
 * exist at once (further ones are dropped on accept).
 */
export interface HttpLimits {
  /** Whole request, headers and body, from the first byte (answered 408, then closed). */
  requestTimeoutMs: number;
  /** Headers complete, from the connection (or the previous response on keep-alive). */
  headersTimeoutMs: number;
  /** Idle keep-alive connection between requests. Behind a load balancer, keep its idle timeout below this. */
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 10_000,
  maxConnections: 2_000,
};
