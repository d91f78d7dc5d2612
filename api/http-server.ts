import http from 'node:http';
import type net from 'node:net';
import { clientAddressKey } from '../domain/client-address-key';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../runtime/http-limits';
import { connectionsDropped } from '../runtime/metrics';
import { isTrusted, trustList } from './client-address';

/** Node answers malformed requests before Koa sees them; these keep the Error shape there too. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'request_header_fields_too_large', 'Request headers exceed the size limit.'],
  // requestTimeout / headersTimeout below: the client sent too slowly.
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request was not received in time.'],
};

function answer(socket: net.Socket, status: number, body: Record<string, string>): void {
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
}

/**
 * One client's share of the listener: at most `share` open connections per address group (IPv6
 * by /64), counted from accept to close; one more is dropped on accept, as past maxConnections.
 * Connections from a trusted proxy are not counted: every client behind it shares its address.
 */
function capPerAddress(server: http.Server, share: number, trustedProxies: string[]): void {
  if (!share) return;
  const proxies = trustList(trustedProxies);
  const open = new Map<string, number>();
  // Before Node's own listener: a dropped socket is never read.
  server.prependListener('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    if (!address || isTrusted(proxies, address)) return;
    const group = clientAddressKey(address);
    const n = open.get(group) ?? 0;
    if (n >= share) {
      connectionsDropped.inc({ reason: 'per_address' });
      socket.destroy();
      return;
    }
    open.set(group, n + 1);
    socket.once('close', () => {
      const left = open.get(group)! - 1;
      if (left > 0) open.set(group, left);
      else open.delete(group);
    });
  });
}

/**
 * An HTTP server for one of our Koa apps, with parse-level refusals in the Error shape and the
 * limits above. `trustedProxies` (TRUSTED_PROXIES) are exempt from the per-address share.
 */
export function createHttpServer(
  handler: http.RequestListener,
  limits: HttpLimits = DEFAULT_HTTP_LIMITS,
  trustedProxies: string[] = [],
): http.Server {
  const server = http.createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often Node looks for connections past the two timeouts above (default 30 s, which
      // would let a connection outlive its bound by that much).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    handler,
  );
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => connectionsDropped.inc({ reason: 'max_connections' }));
  capPerAddress(server, limits.maxConnectionsPerAddress, trustedProxies);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    if (!socket.writable) return socket.destroy();
    const known = err.code ? CLIENT_ERRORS[err.code] : undefined;
    if (known) answer(socket, known[0], { error: known[1], detail: known[2] });
    else answer(socket, 400, { error: 'invalid_request', detail: 'The request could not be parsed as HTTP.' });
  });
  return server;
}
