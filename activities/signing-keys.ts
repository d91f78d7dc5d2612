import { signingKeys } from '../db/signing-key-service';
import { ROTATION_INTERVAL_MS } from '../domain/signing-keys';
import type { ActivityDeps } from './deps';

/** The scheduled key rotation (workflows/signing-key-rotation.ts): idempotent, so a repeated tick rotates once. */
export function createSigningKeyActivities(deps: ActivityDeps) {
  return {
    async rotateSigningKeyIfDue(): Promise<{ kid: string; rotated: boolean }> {
      const r = await signingKeys(deps.db, deps.vault).rotate({ olderThanMs: ROTATION_INTERVAL_MS });
      return { kid: r.kid, rotated: r.rotated };
    },
  };
}
