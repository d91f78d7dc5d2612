import { withTenant } from '../db/tenant-tx';
import { ConnectionError, listConnectionsSafe, recordProofFailure } from '../db/connections';
import { loadCredential, markConnectionProven } from '../db/connection-service';
import { claimProofImport, type ImportOnProof } from '../db/imports';
import type { Mode, ProviderId } from '../domain/providers';
import type { ActivityDeps } from './deps';
import { toActivityFailure } from './provider-failures';

export interface ProbeTarget {
  connectionId: string;
  provider: ProviderId;
  accountRef: string;
  mode: Mode;
}

/** One probe call's outcome, as the proof is recorded from it. */
export interface ProbeResult {
  connectionId: string;
  mode: Mode;
  reachable: boolean;
  reason: string | null;
}

export interface ProofRecord {
  connectionId: string;
  proven: boolean;
  /** Why it is not proven (the provider's reason, or that nothing could be tried). */
  error: string | null;
  /** A web provider's account proven: the import of its existing subscribers to start (once per connection). */
  importOnProof?: ImportOnProof;
}

/** Said when a connection has no credential the probe could try. */
export const NO_CREDENTIAL = 'no credential to verify with: add the test or live credential for this account';

export function createProviderActivities({ db, config, vault, adapters }: ActivityDeps) {
  return {
    /** Every (connection, mode) of the tenant, or of the one connection named, that has a credential to try. */
    async listProbeTargets(input: { tenantId: string; connectionId?: string }): Promise<ProbeTarget[]> {
      const conns = await withTenant(db, input.tenantId, (trx) => listConnectionsSafe(trx));
      return conns
        .filter((c) => c.is_active && (input.connectionId === undefined || c.id === input.connectionId))
        .flatMap((c) =>
          (['test', 'live'] as const)
            .filter((m) => (m === 'test' ? c.has_test_credential : c.has_live_credential))
            .map((mode) => ({ connectionId: c.id, provider: c.provider, accountRef: c.account_ref, mode })),
        );
    },

    /**
     * One authenticated, read-only call proving the provider answers with this credential, for
     * this account (each adapter's checkReachable names the account, bundle or package). The
     * credential is decrypted here, used, and dropped: it is never an activity input or
     * result, so it never reaches Temporal's history.
     */
    async probeProvider(input: { tenantId: string; target: ProbeTarget }): Promise<{ ok: true }> {
      const { target } = input;
      const credential = await withTenant(db, input.tenantId, (trx) =>
        loadCredential(trx, vault, target.connectionId, target.mode),
      );
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

    /**
     * Record each connection's proof from the probe: one mode whose call succeeded proves the
     * account (its credential reaches it); otherwise the reasons are kept for the dashboard. An
     * account another connection has already proven stays unproven here, with a reason that does
     * not say whose it is. A psp_b/psp_c key that works proves nothing about the account (only
     * OAuth claims those): the connection stays unproven with the note that says so.
     */
    async recordProofs(input: {
      tenantId: string;
      connectionIds: string[];
      results: ProbeResult[];
    }): Promise<ProofRecord[]> {
      return withTenant(db, input.tenantId, async (trx) => {
        const out: ProofRecord[] = [];
        for (const connectionId of input.connectionIds) {
          const mine = input.results.filter((r) => r.connectionId === connectionId);
          let error: string | null = mine.some((r) => r.reachable)
            ? null
            : mine.map((r) => `${r.mode}: ${r.reason ?? 'failed'}`).join('; ') || NO_CREDENTIAL;
          if (error === null) {
            try {
              await markConnectionProven(trx, connectionId, 'provider_call');
            } catch (err) {
              if (!(err instanceof ConnectionError)) throw err;
              error = err.message;
            }
          }
          if (error !== null) await recordProofFailure(trx, connectionId, error);
          const importOnProof = error === null ? await claimProofImport(trx, input.tenantId, connectionId) : null;
          out.push({ connectionId, proven: error === null, error, ...(importOnProof ? { importOnProof } : {}) });
        }
        return out;
      });
    },
  };
}
