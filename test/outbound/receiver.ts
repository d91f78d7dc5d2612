import http from 'node:http';
import type net from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A tenant's backend in the tests: records every POST (headers and raw body) and answers what
 * the test scripted. Verification is the standardwebhooks library's own (`Webhook.verify`),
 * never ours.
 */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status?: number;
  /** Answer only after this long (a receiver too slow for the attempt timeout). */
  delayMs?: number;
  body?: string;
  headers?: Record<string, string>;
}

export async function startReceiver() {
  const received: Received[] = [];
  // Scripted answers, taken in order; when empty, 200.
  const script: Reply[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const reply = script.shift() ?? {};
      const answer = () => {
        if (res.destroyed) return;
        res
          .writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
          .end(reply.body ?? '{"ok":true}');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    script,
    /** The library's verifier: answers the parsed body, or throws WebhookVerificationError. */
    verify(r: Received, secret: string): any {
      return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
export type TestReceiver = Awaited<ReturnType<typeof startReceiver>>;
