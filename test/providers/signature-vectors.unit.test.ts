import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../providers/errors';
import { verifyPaddleSignature } from '../../providers/psp_b/webhook';
import { verifySignature } from '../../providers/psp_c/webhook';
import { PADDLE_NODE_SDK, RAZORPAY_NODE_SDK } from './fixtures/signature-vectors';

/** Our Paddle (psp_b) and Razorpay (psp_c) signature checks against the vectors those providers' own SDK tests publish. */

const paddle = (body: string, header: string, secret: string, now: string) => () =>
  verifyPaddleSignature({
    headers: { 'paddle-signature': header },
    rawBody: Buffer.from(body),
    secret,
    now: new Date(now),
  });

describe(`Paddle-Signature: ${PADDLE_NODE_SDK.source}`, () => {
  it.each(PADDLE_NODE_SDK.signatures)('%s', (_name, body, header, secret, valid) => {
    const check = paddle(body, header, secret, PADDLE_NODE_SDK.now);
    if (valid) expect(check).not.toThrow();
    else expect(check).toThrow(WebhookVerificationError);
  });

  it.each(PADDLE_NODE_SDK.malformedHeaders)('validate header - %s: refused as malformed', (_name, header) => {
    expect(paddle('{"data": ["1", "2"]}', header, 'VALID_SECRET', PADDLE_NODE_SDK.now)).toThrow(
      /Paddle-Signature header is malformed/,
    );
  });

  it.each(PADDLE_NODE_SDK.clock.cases)('%s', (_name, now, valid) => {
    const check = paddle(PADDLE_NODE_SDK.clock.body, PADDLE_NODE_SDK.clock.header, PADDLE_NODE_SDK.clock.secret, now);
    if (valid) expect(check).not.toThrow();
    else expect(check).toThrow(/older than 5 s/);
  });
});

describe(`X-Razorpay-Signature: ${RAZORPAY_NODE_SDK.source}`, () => {
  const { body, secret, correctSignature, wrongSignature } = RAZORPAY_NODE_SDK;
  it('validateWebhookSignature: the correct signature is accepted', () => {
    expect(() => verifySignature(Buffer.from(body), correctSignature, secret)).not.toThrow();
  });
  it('validateWebhookSignature: the wrong signature is refused', () => {
    expect(() => verifySignature(Buffer.from(body), wrongSignature, secret)).toThrow(/signature does not match/);
  });
  it('the same body re-serialised with whitespace, or under another secret, is refused with the published signature', () => {
    expect(() =>
      verifySignature(Buffer.from(JSON.stringify(JSON.parse(body), null, 1)), correctSignature, secret),
    ).toThrow(/signature does not match/);
    expect(() => verifySignature(Buffer.from(body), correctSignature, '1234567')).toThrow(/signature does not match/);
  });
});
