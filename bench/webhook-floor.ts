/**
 * The floor for webhook ingest: a bare endpoint that only verifies the Stripe signature (the
 * same stripe-node call the receiver makes, same tolerance) and answers 200. No routing, no
 * database, no Temporal. Env: PORT, WEBHOOK_SECRET.
 */
import http from 'node:http';
import Stripe from 'stripe';
import { TOLERANCE_SECONDS } from '../providers/psp_a/webhook';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('WEBHOOK_SECRET is required');
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return void res.writeHead(200).end('ok');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      const event = Stripe.webhooks.constructEvent(
        Buffer.concat(chunks),
        String(req.headers['stripe-signature'] ?? ''),
        secret,
        TOLERANCE_SECONDS,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: true, id: event.id }));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"webhook_refused"}');
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT || 4950), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
