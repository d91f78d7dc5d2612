import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { AddressRefused, checkLiteralHost, guardedLookup } from '../runtime/outbound-address';
import { outboundPortProblem, type PortRange } from '../domain/outbound-ports';

/** What is kept of a receiver's answer (the delivery log shows it; no more is read). */
export const RESPONSE_EXCERPT_BYTES = 1024;

/**
 * The Standard Webhooks signature header: `v1,<base64 HMAC-SHA256>` per secret that signs now,
 * space-separated (during a rotation's overlap, both), made by the `standardwebhooks` library.
 */
export function signatureHeader(secrets: readonly string[], msgId: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(msgId, at, body)).join(' ');
}

export interface PostResult {
  statusCode: number | null;
  latencyMs: number;
  excerpt: string | null;
  error: string | null;
  /** The address was refused: retrying will not help. */
  refused: boolean;
}

/**
 * One signed POST: no redirect followed (a 3xx is a failed attempt), the answer read up to
 * RESPONSE_EXCERPT_BYTES and the connection dropped after that, the whole attempt bounded by
 * `timeoutMs`. The port is checked again here (domain/outbound-ports.ts): a URL saved before
 * the operator narrowed the list is refused, not sent. Never throws: the caller records what
 * happened.
 */
export async function postSigned(o: { url: string; msgId: string; body: string; secrets: readonly string[]; timeoutMs: number; allowPrivate: boolean; allowedPorts: readonly PortRange[] }): Promise<PostResult> {
  const started = performance.now();
  const done = (r: Omit<PostResult, 'latencyMs'>): PostResult => ({ ...r, latencyMs: performance.now() - started });
  let url: URL;
  try {
    url = new URL(o.url);
    checkLiteralHost(url, o.allowPrivate);
  } catch (e) {
    return done({ statusCode: null, excerpt: null, error: (e as Error).message, refused: true });
  }
  const portProblem = outboundPortProblem(url, o.allowedPorts);
  if (portProblem) return done({ statusCode: null, excerpt: null, error: `refused: ${portProblem} (OUTBOUND_WEBHOOK_ALLOWED_PORTS)`, refused: true });
  const at = new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'billing-service-webhooks/1',
    'webhook-id': o.msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatureHeader(o.secrets, o.msgId, at, o.body),
  };
  const signal = AbortSignal.timeout(o.timeoutMs);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    const req = client.request(url, { method: 'POST', headers, lookup: guardedLookup(o.allowPrivate) as never, signal, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        resolve(done({ statusCode: res.statusCode ?? null, excerpt: Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'), error: null, refused: false }));
        res.destroy();
      };
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size >= RESPONSE_EXCERPT_BYTES) finish();
      });
      res.on('end', finish);
      res.on('error', () => finish());
    });
    req.on('error', (e) => {
      const refused = e instanceof AddressRefused || (e as Error).name === 'AddressRefused';
      const error = signal.aborted ? `timed out after ${o.timeoutMs} ms` : refused ? e.message : `${(e as NodeJS.ErrnoException).code ?? 'error'}: ${e.message}`;
      resolve(done({ statusCode: null, excerpt: null, error, refused }));
    });
    req.end(o.body);
  });
}
