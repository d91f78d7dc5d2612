import http from 'node:http';
import type net from 'node:net';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../runtime/http-limits';

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


/** An HTTP server for one of our Koa apps, with parse-level refusals in the Error shape and the limits above. */
export function createHttpServer(handler: http.RequestListener, limits: HttpLimits = DEFAULT_HTTP_LIMITS): http.Server {
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
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    if (!socket.writable) return socket.destroy();
    const known = err.code ? CLIENT_ERRORS[err.code] : undefined;
    if (known) answer(socket, known[0], { error: known[1], detail: known[2] });
    else answer(socket, 400, { error: 'invalid_request', detail: 'The request could not be parsed as HTTP.' });
  });
  return server;
}
