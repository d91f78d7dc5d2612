import crypto from 'node:crypto';

/**
 * The id the service is expected to store a Razorpay delivery under: `rzp_evt_` + the first 32
 * hex characters of the SHA-256 of the raw body (the body carries no event id, and only the body
 * is signed). The emulator reports it so tests can find the delivery; it is written here apart
 * from the service's own (providers/psp_c/event-id.ts), so a change on either side shows up as
 * a delivery the tests cannot find instead of agreeing with itself.
 */
export function expectedServiceEventId(body: string): string {
  return `rzp_evt_${crypto.createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 32)}`;
}
