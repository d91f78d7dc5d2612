import crypto from 'node:crypto';

/**
 * The id a verified Razorpay event is stored and deduplicated under: `rzp_evt_` + the first 32
 * hex characters of the SHA-256 of the raw body. Razorpay's body carries no event id and its
 * `X-Razorpay-Event-Id` header is not covered by the signature, so an id taken from the header
 * let one signed body be replayed under any number of ids. The body is what is signed, and a
 * redelivery resends the same bytes, so its hash is the same on every retry and cannot be
 * changed without breaking the signature. (The emulator derives the same id on its own, emulators/psp_c/event-id.ts.)
 */
export function razorpayEventId(rawBody: Buffer | string): string {
  return `rzp_evt_${crypto.createHash('sha256').update(rawBody).digest('hex').slice(0, 32)}`;
}
