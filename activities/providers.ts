import { withTenant } from '../db/tenant-tx';
import { listConnectionsSafe, loadCredential } from '../db/connections';
import type { Mode, ProviderId } from '../domain/providers';
import type { ActivityDeps } from './index';
import { toActivityFailure } from './provider-failures';

export interface ProbeTarget {
  connectionId: string;
  provider: ProviderId;
  accountRef: string;
  mode: Mode;
}

export function createProviderActivities({ db, config, vault, adapters }: ActivityDeps) {
  return {
    /** Every (connection, mode) of the tenant that has a credential to try. */
    async listProbeTargets(input: { tenantId: string }): Promise<ProbeTarget[]> {
      const conns = await withTenant(db, input.tenantId, (trx) => listConnectionsSafe(trx));
      return conns
        .filter((c) => c.is_active)
        .flatMap((c) =>
          (['test', 'live'] as const)
            .filter((m) => (m === 'test' ? c.has_test_credential : c.has_live_credential))
            .map((mode) => ({ connectionId: c.id, provider: c.provider, accountRef: c.account_ref, mode })),
        );
    },

    /**
     * One authenticated, read-only call proving the provider answers with this credential.
     * The credential is decrypted here, used, and dropped: it is never an activity input or
     * result, so it never reaches Temporal's history.
     */
    async probeProvider(input: { tenantId: string; target: ProbeTarget }): Promise<{ ok: true }> {
      const { target } = input;
      const credential = await withTenant(db, input.tenantId, (trx) => loadCredential(trx, vault, target.connectionId, target.mode));
      try {
        await adapters[target.provider].checkReachable({
          baseUrl: config.providerBaseUrls[target.provider],
          mode: target.mode,
          credential,
          accountRef: target.accountRef,
        });
        return { ok: true };
      } catch (err) {
        throw toActivityFailure(err);
      }
    },
  };
}
