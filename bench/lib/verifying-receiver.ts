import http from 'node:http';
import type net from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A delivery the receiver verified (standardwebhooks' own check), with when it arrived. */
export interface VerifiedArrival {
  id: string;
  type: string;
  /** When the event was recorded (its payload's timestamp), ms. */
  recordedAt: number;
  arrivedAt: number;
}

/**
 * A tenant's backend for the outbound benches: verifies each POST with the endpoint's secret
 * (read at each request: the secret is known only once the endpoint exists), answers 204, or 400
 * and counts it when the signature does not verify.
 */
export async function startVerifyingReceiver(secret: () => string) {
  const arrivals: VerifiedArrival[] = [];
  let refused = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrivedAt = Date.now();
      try {
        const body = new Webhook(secret()).verify(
          Buffer.concat(chunks).toString('utf8'),
          req.headers as Record<string, string>,
        ) as { id: string; type: string; timestamp: string };
        arrivals.push({ id: body.id, type: body.type, recordedAt: Date.parse(body.timestamp), arrivedAt });
        res.writeHead(204).end();
      } catch {
        refused++;
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`,
    arrivals,
    refused: () => refused,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
