import http from 'node:http';
import type net from 'node:net';
import type { ProviderId } from '../../domain/providers';

/**
 * Stands in for our webhook endpoint in the provider suites: records every delivery exactly as
 * it arrived (headers and raw body bytes, which signatures cover) and answers like the service.
 */
export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface WebhookReceiver {
  /** The target to hand the emulator: http://127.0.0.1:<free port>/api/webhooks/<provider>. */
  url: string;
  /** Deliveries in arrival order; one array for the receiver's life (clear() empties it in place). */
  received: ReceivedWebhook[];
  clear(): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  provider: ProviderId,
  reply: { status?: number; body?: string } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Recorded before answering: the emulator's delivery call returns only after this.
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const status = reply.status ?? 200;
      if (status === 204) res.writeHead(204).end();
      else res.writeHead(status, { 'content-type': 'application/json' }).end(reply.body ?? '{"received":true}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/api/webhooks/${provider}`,
    received,
    clear: () => {
      received.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
