import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactPayload, TRUNCATED } from '../../domain/redact';
import { createPspAAdapter } from '../../providers/psp_a/adapter';
import { createPspBAdapter } from '../../providers/psp_b/adapter';
import { createPspCAdapter } from '../../providers/psp_c/adapter';
import type { WebhookInput } from '../../providers/types';

// A correctly signed body nested 200,000 levels deep goes through each web adapter's
// verification and normalisation, and through the redaction the receiver stores it with,
// without overflowing the stack (that used to answer 500).

const LEVELS = 200_000;
const deep = `${'{"n":['.repeat(LEVELS)}1${']}'.repeat(LEVELS)}`;
const secret = 'whsec_deep_body';
const hmac = (data: string) => crypto.createHmac('sha256', secret).update(data).digest('hex');
const nowSec = Math.floor(Date.now() / 1000);

const cases: [string, () => Promise<unknown>][] = [
  [
    'psp_a',
    () => {
      const body = `{"id":"evt_deep","object":"event","type":"customer.subscription.updated","account":"acct_1","livemode":false,"created":${nowSec},"data":{"object":{"object":"subscription","id":"sub_1","customer":"cus_1","metadata":${deep}}}}`;
      const input: WebhookInput = {
        headers: { 'stripe-signature': `t=${nowSec},v1=${hmac(`${nowSec}.${body}`)}` },
        rawBody: Buffer.from(body),
        secret,
      };
      return createPspAAdapter().verifyWebhook(input);
    },
  ],
  [
    'psp_b',
    () => {
      const body = `{"event_id":"evt_deep","event_type":"subscription.updated","occurred_at":"2024-01-01T00:00:00Z","seller_id":"sel_1","data":{"id":"sub_1","customer_id":"ctm_1","custom_data":${deep}}}`;
      const input: WebhookInput = {
        headers: { 'paddle-signature': `ts=${nowSec};h1=${hmac(`${nowSec}:${body}`)}` },
        rawBody: Buffer.from(body),
        secret,
      };
      return createPspBAdapter().verifyWebhook(input);
    },
  ],
  [
    'psp_c',
    () => {
      const body = `{"entity":"event","account_id":"acc_1","event":"subscription.updated","contains":["subscription"],"payload":{"subscription":{"entity":{"id":"sub_1","notes":${deep}}}},"created_at":${nowSec}}`;
      const input: WebhookInput = {
        headers: { 'x-razorpay-signature': hmac(body) },
        rawBody: Buffer.from(body),
        secret,
      };
      return createPspCAdapter().verifyWebhook(input);
    },
  ],
];

describe('a signed body nested 200,000 levels deep', () => {
  it.each(cases)('%s verifies it, and the redacted payload can be stored', async (provider, verify) => {
    const event = (await verify()) as { provider: string; subscription_external_id: string | null; payload: unknown };
    expect(event.provider).toBe(provider);
    expect(event.subscription_external_id).toBe('sub_1');
    const stored = JSON.stringify(redactPayload(event.payload));
    expect(stored).toContain(TRUNCATED);
  });
});
