import { Webhook } from 'standardwebhooks';
import { EgressError, egressRequest } from '../egress/request';
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
 * One signed POST through the egress path (egress/request.ts): no redirect followed (a 3xx is a
 * failed attempt), the answer read up to RESPONSE_EXCERPT_BYTES, the whole attempt bounded by
 * `timeoutMs`. The port is checked again here (domain/outbound-ports.ts): a URL saved before
 * the operator narrowed the list is refused, not sent. Never throws: the caller records what
 * happened.
 */
export async function postSigned(o: {
  url: string;
  msgId: string;
  body: string;
  secrets: readonly string[];
  timeoutMs: number;
  allowPrivate: boolean;
  allowedPorts: readonly PortRange[];
}): Promise<PostResult> {
  const started = performance.now();
  const done = (r: Omit<PostResult, 'latencyMs'>): PostResult => ({ ...r, latencyMs: performance.now() - started });
  let portProblem: string | null;
  try {
    portProblem = outboundPortProblem(new URL(o.url), o.allowedPorts);
  } catch {
    return done({ statusCode: null, excerpt: null, error: 'refused: the URL is not an http(s) URL', refused: true });
  }
  if (portProblem)
    return done({
      statusCode: null,
      excerpt: null,
      error: `refused: ${portProblem} (OUTBOUND_WEBHOOK_ALLOWED_PORTS)`,
      refused: true,
    });
  const at = new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'billing-service-webhooks/1',
    'webhook-id': o.msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatureHeader(o.secrets, o.msgId, at, o.body),
  };
  try {
    const answer = await egressRequest(
      o.url,
      { method: 'POST', headers, body: o.body },
      {
        allowPrivate: o.allowPrivate,
        timeoutMs: o.timeoutMs,
        maxResponseBytes: RESPONSE_EXCERPT_BYTES,
        oversize: 'truncate',
      },
    );
    return done({ statusCode: answer.status, excerpt: answer.body.toString('utf8'), error: null, refused: false });
  } catch (e) {
    const kind = e instanceof EgressError ? e.kind : 'connect_failed';
    const refused = kind === 'refused_address' || kind === 'bad_url';
    const error =
      kind === 'timeout'
        ? `timed out after ${o.timeoutMs} ms`
        : refused
          ? `refused: ${(e as Error).message}`
          : (e as Error).message;
    return done({ statusCode: null, excerpt: null, error, refused });
  }
}
