/**
 * Webhook load of the ingest benches: one real emulator checkout captured, cloned per purchase
 * with fresh ids, signed with the account's secret (Stripe's scheme), sent in a closed loop.
 */
import http from 'node:http';
import type net from 'node:net';
import { signatureHeader } from '../../emulators/psp_a/events';
import { quantile, type WebhookStack } from './webhook-stack';
import { emulatorCheckout } from './checkouts';

/** Capture one real checkout's three signed bodies from the emulator. */
export async function captureCheckout(stack: Pick<WebhookStack, 'emulators' | 'account'>): Promise<string[]> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await emulatorCheckout(stack, 'template_user', {
    email: 'template@example.com',
    target: `http://127.0.0.1:${port}/`,
  });
  await new Promise<void>((r) => server.close(() => r()));
  return bodies;
}

/** Every id-like string of the template (evt_, cus_, sub_, in_, pi_, ch_…) and the user's email/id, to replace per purchase. */
function idsIn(bodies: string[]): string[] {
  const ids = new Set<string>(['template_user', 'template@example.com']);
  for (const b of bodies)
    for (const m of b.matchAll(/"((?:evt|cus|sub|in|pi|ch|ii|si|il|txn|re)_[A-Za-z0-9]+)"/g)) ids.add(m[1]);
  return [...ids];
}

export interface Sender {
  send(i: number): Promise<number>;
  eventId(i: number): string;
  purchase(i: number): number;
}

export function makeSender(url: string, bodies: string[], secret: string, tag: string, agent: http.Agent): Sender {
  const ids = idsIn(bodies);
  const u = new URL(url);
  const bodyOf = (i: number) => {
    const k = Math.floor(i / 3);
    let b = bodies[i % 3];
    for (const id of ids) b = b.split(id).join(id.includes('@') ? `${tag}_${k}@example.com` : `${id}_${tag}_${k}`);
    // Stripe's `created`: the receiver orders a purchase's events by it; keep the checkout's order, now.
    return b;
  };
  const eventId = (i: number) => `${(JSON.parse(bodies[i % 3]) as { id: string }).id}_${tag}_${Math.floor(i / 3)}`;
  const send = (i: number) =>
    new Promise<number>((resolve) => {
      const body = bodyOf(i);
      const req = http.request(
        {
          agent,
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'stripe-signature': signatureHeader(secret, body),
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      // Bounded: an answer that never comes counts as a refusal (0), it does not hang the run.
      req.setTimeout(30_000, () => req.destroy());
      req.end(body);
    });
  return { send, eventId, purchase: (i) => Math.floor(i / 3) };
}

export interface LoadOutcome {
  sent: number;
  statuses: Record<string, number>;
  ok: number[];
  notOk: number[];
  seconds: number;
  p50: number;
  p99: number;
}

/** Closed loop: `connections` senders, each sending its next event as soon as the last is answered. */
export async function closedLoop(
  sender: Sender,
  seconds: number,
  firstIndex = 0,
  connections = 32,
): Promise<LoadOutcome> {
  let next = firstIndex;
  const ok: number[] = [];
  const notOk: number[] = [];
  const statuses: Record<string, number> = {};
  const lat: number[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const i = next++;
        const s = performance.now();
        const status = await sender.send(i);
        lat.push(performance.now() - s);
        statuses[status] = (statuses[status] ?? 0) + 1;
        (status === 200 ? ok : notOk).push(i);
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return {
    sent: next - firstIndex,
    statuses,
    ok,
    notOk,
    seconds: (performance.now() - t0) / 1000,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
  };
}
