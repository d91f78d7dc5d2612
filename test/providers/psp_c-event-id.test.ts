import { describe, expect, it } from 'vitest';
import { razorpayEventId } from '../../providers/psp_c/event-id';
import { expectedServiceEventId } from '../../emulators/psp_c/event-id';

/** The known answer is Python's `hashlib.sha256(body).hexdigest()[:32]`: neither side's code computes the expectation. */
describe('Razorpay event ids: the service and the emulator agree, each derived on its own', () => {
  it('rzp_evt_ + the first 32 hex characters of the SHA-256 of the raw body', () => {
    const body = '{"entity":"event","event":"payment.captured","created_at":1}';
    const known = 'rzp_evt_f8f2e33334feed8bc411aa990e7627e8';
    expect(razorpayEventId(body)).toBe(known);
    expect(razorpayEventId(Buffer.from(body))).toBe(known);
    expect(expectedServiceEventId(body)).toBe(known);
  });
});
