import net from 'node:net';
import type http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiApp } from '../../api/apps';
import { createHttpServer } from '../../api/http-server';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../../runtime/http-limits';
import { loadConfig } from '../../runtime/config';
import { createLogger } from '../../runtime/logger';
import { connectionsDropped } from '../../runtime/metrics';
import { testServices } from '../helpers/api';
import { until } from '../helpers/until';

// A small listener: 20 connections, 3 per address (the production share is a tenth: 200 of 2,000).
const LIMITS: HttpLimits = { ...DEFAULT_HTTP_LIMITS, maxConnections: 20, maxConnectionsPerAddress: 3 };

/**
 * A keep-alive client from `localAddress` (any 127.x.y.z is this machine's loopback): it asks
 * for /healthz and then holds its connection. `accepted` once answered; a dropped one closes
 * having received nothing.
 */
function hold(port: number, localAddress: string) {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  let received = '';
  socket.on('error', () => {});
  socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'));
  const outcome = new Promise<'accepted' | 'dropped'>((resolve) => {
    socket.on('data', (d) => {
      received += d.toString('latin1');
      if (/^HTTP\/1\.1 200 /.test(received)) resolve('accepted');
    });
    socket.on('close', () => resolve(received ? 'accepted' : 'dropped'));
  });
  return { socket, outcome };
}

const dropped = async () =>
  (await connectionsDropped.get()).values.find((v) => v.labels.reason === 'per_address')?.value ?? 0;

describe('one client address holds at most its share of a listener (HTTP_MAX_CONNECTIONS_PER_ADDRESS)', () => {
  let server: http.Server;
  const clients: ReturnType<typeof hold>[] = [];
  const start = async (trustedProxies: string[] = []) => {
    server = createHttpServer(createApiApp(testServices(), createLogger('silent')).callback(), LIMITS, trustedProxies);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as net.AddressInfo).port;
  };
  const open = (port: number, from: string) => {
    const c = hold(port, from);
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('past its share one address is dropped on accept, while a second address still connects; a closed connection frees its place', async () => {
    const port = await start();
    const before = await dropped();
    const first = [open(port, '127.0.0.1'), open(port, '127.0.0.1'), open(port, '127.0.0.1')];
    expect(await Promise.all(first.map((c) => c.outcome))).toEqual(['accepted', 'accepted', 'accepted']);
    // The fourth and fifth from the same address: closed at once, never answered.
    expect(await open(port, '127.0.0.1').outcome).toBe('dropped');
    expect(await open(port, '127.0.0.1').outcome).toBe('dropped');
    expect(await dropped()).toBe(before + 2);
    // Far below the listener's cap of 20: another address gets its own share.
    const second = [open(port, '127.0.0.2'), open(port, '127.0.0.2'), open(port, '127.0.0.2')];
    expect(await Promise.all(second.map((c) => c.outcome))).toEqual(['accepted', 'accepted', 'accepted']);
    expect(await open(port, '127.0.0.2').outcome).toBe('dropped');
    // One of the first address's connections closes: its place is free again.
    first[0].socket.destroy();
    await until(
      'the server to see the close',
      () => new Promise<number>((r) => server.getConnections((_e, n) => r(n))),
      (n) => n === 5,
    );
    expect(await open(port, '127.0.0.1').outcome).toBe('accepted');
  });

  it('a trusted proxy carries every client behind it: its own connections are not capped per address', async () => {
    const port = await start(['127.0.0.3']);
    const viaProxy = Array.from({ length: LIMITS.maxConnectionsPerAddress + 3 }, () => open(port, '127.0.0.3'));
    expect(new Set(await Promise.all(viaProxy.map((c) => c.outcome)))).toEqual(new Set(['accepted']));
    // Anyone else keeps the share.
    const direct = Array.from({ length: LIMITS.maxConnectionsPerAddress + 1 }, () => open(port, '127.0.0.4'));
    expect((await Promise.all(direct.map((c) => c.outcome))).filter((o) => o === 'dropped')).toHaveLength(1);
  });

  it('the share is a tenth of HTTP_MAX_CONNECTIONS unless HTTP_MAX_CONNECTIONS_PER_ADDRESS says otherwise (0 = none)', () => {
    expect(loadConfig({}).httpLimits.maxConnectionsPerAddress).toBe(200);
    expect(DEFAULT_HTTP_LIMITS.maxConnectionsPerAddress).toBe(200);
    expect(loadConfig({ HTTP_MAX_CONNECTIONS: '50' }).httpLimits.maxConnectionsPerAddress).toBe(5);
    expect(loadConfig({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '40' }).httpLimits.maxConnectionsPerAddress).toBe(40);
    expect(loadConfig({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' }).httpLimits.maxConnectionsPerAddress).toBe(0);
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: 'lots' })).toThrow(
      /HTTP_MAX_CONNECTIONS_PER_ADDRESS must be a whole number/,
    );
  });
});
