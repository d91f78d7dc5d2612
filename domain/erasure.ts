/**
 * What one erasure removed (docs/support.md, "Erasure"), as counts: an erasure's record and its
 * answer name no value. The erasing is db/erasure.ts; an event's proof form, the rule that keeps
 * erased events' hashes, is `event_proof_form` (migration 069) and, for receivers in Node,
 * `proofForm` in examples/receiver/event-chain.ts.
 */
export interface ErasureCounts {
  attributes: number;
  aliases: number;
  notes: number;
  emails: number;
  event_bodies: number;
}
