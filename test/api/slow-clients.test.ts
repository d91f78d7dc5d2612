import net from 'node:net';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardApp } from '../../api/apps';
import { createHttpServer } from '../../api/http-server';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../../runtime/http-limits';
import { loadConfig } from '../../runtime/config';
import { createLogger } from '../../runtime/logger';
import { testServices } from '../helpers/api';
import { until } from '../helpers/until';

// Short bounds so the test takes seconds; the production values are checked separately below.
const LIMITS: HttpLimits = {
  requestTimeoutMs: 1_500,
  headersTimeoutMs: 1_000,
  keepAliveTimeoutMs: 500,
  maxConnections: 3,
  maxConnectionsPerAddress: 0,
};
// Node looks for expired connections once a second (connectionsCheckingInterval).
const SLACK_MS = 1_500;

/** A raw client: what it received and how long the server let it live. */
function client(port: number, onConnect: (s: net.Socket) => void) {
  const s = net.connect(port, '127.0.0.1');
  const started = Date.now();
  let received = '';
  s.on('data', (d) => (received += d.toString('latin1')));
  s.on('connect', () => onConnect(s));
  const closed = new Promise<{ ms: number; received: string }>((resolve) => {
    s.on('error', () => {});
    s.on('close', () => resolve({ ms: Date.now() - started, received }));
  });
  return { socket: s, closed };
}

/** Writes one byte at a time at `everyMs` until the server hangs up: the slow client itself. */
function trickle(s: net.Socket, text: string, everyMs: number) {
  let i = 0;
  const t = setInterval(() => {
    if (s.destroyed || !s.writable) return clearInterval(t);
    s.write(text[i++ % text.length]);
  }, everyMs);
  s.on('close', () => clearInterval(t));
}

describe('slow clients are cut off within the listener bounds (issue #18, item 6)', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = createHttpServer(createDashboardApp(testServices(), createLogger('silent')).callback(), LIMITS);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a body sent a byte at a time is answered 408 and closed by the request timeout', async () => {
    const c = client(port, (s) => {
      s.write(
        'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000\r\n\r\n',
      );
      trickle(s, 'a', 200);
    });
    const { ms, received } = await c.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(ms).toBeLessThan(LIMITS.requestTimeoutMs + SLACK_MS);
  });

  it('headers sent a byte at a time are cut off by the headers timeout', async () => {
    const c = client(port, (s) => {
      s.write('GET / HTTP/1.1\r\nHost: x\r\n');
      trickle(s, 'X-Slow: y', 150);
    });
    const { ms, received } = await c.closed;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(ms).toBeLessThan(LIMITS.headersTimeoutMs + SLACK_MS);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const c = client(port, (s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'));
    const { ms, received } = await c.closed;
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    expect(ms).toBeLessThan(LIMITS.keepAliveTimeoutMs + SLACK_MS);
  });

  it('connections past the cap are dropped at once', async () => {
    const held = Array.from({ length: LIMITS.maxConnections }, () =>
      client(port, (s) => s.write('GET / HTTP/1.1\r\n')),
    );
    await Promise.all(
      held.map((h) => new Promise((r) => (h.socket.readyState === 'open' ? r(null) : h.socket.once('connect', r)))),
    );
    await until(
      'the server to hold the capped number of connections',
      () => new Promise<number>((r) => server.getConnections((_e, n) => r(n))),
      (n) => n >= LIMITS.maxConnections,
    );
    const extra = client(port, () => {});
    const { ms, received } = await extra.closed;
    expect(received).toBe('');
    expect(ms).toBeLessThan(LIMITS.headersTimeoutMs);
    for (const h of held) h.socket.destroy();
  });

  it('the api process gets the production bounds unless HTTP_* variables say otherwise', () => {
    expect(loadConfig({}).httpLimits).toEqual(DEFAULT_HTTP_LIMITS);
    expect(DEFAULT_HTTP_LIMITS.requestTimeoutMs).toBeLessThanOrEqual(30_000);
    expect(loadConfig({ HTTP_MAX_CONNECTIONS: '50' }).httpLimits.maxConnections).toBe(50);
    const s = createHttpServer(() => {});
    expect({
      request: s.requestTimeout,
      headers: s.headersTimeout,
      keepAlive: s.keepAliveTimeout,
      max: s.maxConnections,
    }).toEqual({
      request: DEFAULT_HTTP_LIMITS.requestTimeoutMs,
      headers: DEFAULT_HTTP_LIMITS.headersTimeoutMs,
      keepAlive: DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs,
      max: DEFAULT_HTTP_LIMITS.maxConnections,
    });
  });
});
