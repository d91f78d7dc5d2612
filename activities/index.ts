import { createPacer } from '../providers/pacing';
import type { ActivityDeps } from './deps';
import { createProviderActivities } from './providers';
import { createRetireActivities, createSyncActivities } from './sync';
import { createLifecycleActivities } from './lifecycle';
import { createStorePurchaseActivities } from './store-purchases';
import { createOutboundActivities } from './outbound-delivery';
import { createImportActivities } from './imports';
import { createGrantActivities } from './grants';
import { createTransferActivities } from './transfers';
import { createHeldChangeActivities } from './held-changes';
import { createReconciliationActivities } from './reconciliation';
import { createReconciliationRunActivities } from './reconciliation-runs';
import { createExportActivities } from './exports';
import { createExportDestinationActivities } from './export-destinations';
import { createEventDigestActivities } from './event-digests';
import { createSigningKeyActivities } from './signing-keys';
import { createOAuthCleanupActivities } from './oauth-records';

export type { ActivityDeps } from './deps';

/** All activities, built from their dependencies (Temporal samples' factory pattern). */
export function createActivities(given: ActivityDeps) {
  const deps = { ...given, pacer: given.pacer ?? createPacer() };
  return {
    ...createProviderActivities(deps),
    ...createSyncActivities(deps),
    ...createRetireActivities(deps),
    ...createLifecycleActivities(deps),
    ...createStorePurchaseActivities(deps),
    ...createOutboundActivities(deps),
    ...createImportActivities(deps),
    ...createGrantActivities(deps),
    ...createTransferActivities(deps),
    ...createHeldChangeActivities(deps),
    ...createReconciliationActivities(deps),
    ...createReconciliationRunActivities(deps),
    ...createExportActivities(deps),
    ...createExportDestinationActivities(deps),
    ...createEventDigestActivities(deps),
    ...createSigningKeyActivities(deps),
    ...createOAuthCleanupActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
