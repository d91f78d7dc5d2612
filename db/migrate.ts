import type { Knex } from 'knex';
import * as schema from './migrations/001_schema';
import * as listIndexes from './migrations/002_list_indexes';
import * as syncRuns from './migrations/004_sync_runs';
import * as dashboardLoginAttempts from './migrations/007_dashboard_login_attempts';
import * as storePurchases from './migrations/008_store_purchases';
import * as webhookOutbox from './migrations/011_webhook_outbox';
import * as tenantScopedPipeline from './migrations/012_tenant_scoped_pipeline';
import * as clientRateLimits from './migrations/013_client_rate_limits';
import * as dashboardHardening from './migrations/014_dashboard_hardening';
import * as loginRole from './migrations/015_login_role';
import * as syncRunWorkflowIds from './migrations/016_sync_run_workflow_ids';
import * as connectionProof from './migrations/017_connection_proof';
import * as outboundWebhooks from './migrations/018_outbound_webhooks';
import * as subscriptionChanges from './migrations/019_subscription_changes';
import * as storeSupersession from './migrations/020_store_supersession';
import * as bucketFillfactor from './migrations/021_bucket_fillfactor';
import * as outboundDrain from './migrations/022_outbound_drain';
import * as overviewRollups from './migrations/023_overview_rollups';
import * as outboundFairness from './migrations/024_outbound_fairness';
import * as oauthAccountClaims from './migrations/025_oauth_account_claims';
import * as team from './migrations/033_team';
import * as imports from './migrations/026_imports';
import * as quietImports from './migrations/027_quiet_imports';
import * as supportDesk from './migrations/029_support_desk';
import * as customerEventSequence from './migrations/030_customer_event_sequence';
import * as heldChanges from './migrations/035_held_changes';
import * as chartHistory from './migrations/037_chart_history';
import * as rollupFoldJob from './migrations/038_rollup_fold_job';
import * as reconciliations from './migrations/039_reconciliations';
import * as reconciledEvents from './migrations/040_reconciled_events';
import * as tenantKeys from './migrations/041_tenant_keys';
import * as reconciliationSchedule from './migrations/042_reconciliation_schedule';
import * as keptPurchaseTokens from './migrations/043_kept_purchase_tokens';
import * as importTriggers from './migrations/044_import_triggers';
import * as provisionalAccess from './migrations/045_provisional_access';
import * as chartSums from './migrations/047_chart_sums';
import * as historyAtEventTime from './migrations/048_history_at_event_time';
import * as receiptLatency from './migrations/049_receipt_latency';
import * as receiptNotifyAfterCommit from './migrations/050_receipt_notify_after_commit';
import * as receiptRenewalQuiet from './migrations/051_receipt_renewal_quiet';
import * as importLimits from './migrations/052_import_limits';
import { TENANT_TABLES as SCHEMA_TENANT_TABLES } from './migrations/001_schema';
import { CLIENT_TENANT_TABLES } from './migrations/013_client_rate_limits';
import { OUTBOUND_TENANT_TABLES } from './migrations/018_outbound_webhooks';
import { CHANGE_TENANT_TABLES } from './migrations/019_subscription_changes';

/** Migrations are listed here (not discovered on disk) so they load the same under tsx, vitest and bundlers. */
const MIGRATIONS: Record<string, Knex.Migration> = {
  '001_schema': schema,
  '002_list_indexes': listIndexes,
  '004_sync_runs': syncRuns,
  '007_dashboard_login_attempts': dashboardLoginAttempts,
  '008_store_purchases': storePurchases,
  '011_webhook_outbox': webhookOutbox,
  '012_tenant_scoped_pipeline': tenantScopedPipeline,
  '013_client_rate_limits': clientRateLimits,
  '014_dashboard_hardening': dashboardHardening,
  '015_login_role': loginRole,
  '016_sync_run_workflow_ids': syncRunWorkflowIds,
  '017_connection_proof': connectionProof,
  '018_outbound_webhooks': outboundWebhooks,
  '019_subscription_changes': subscriptionChanges,
  '020_store_supersession': storeSupersession,
  '021_bucket_fillfactor': bucketFillfactor,
  '022_outbound_drain': outboundDrain,
  '023_overview_rollups': overviewRollups,
  '024_outbound_fairness': outboundFairness,
  '025_oauth_account_claims': oauthAccountClaims,
  '033_team': team,
  '026_imports': imports,
  '027_quiet_imports': quietImports,
  '029_support_desk': supportDesk,
  '030_customer_event_sequence': customerEventSequence,
  '035_held_changes': heldChanges,
  '037_chart_history': chartHistory,
  '038_rollup_fold_job': rollupFoldJob,
  '039_reconciliations': reconciliations,
  '040_reconciled_events': reconciledEvents,
  '041_tenant_keys': tenantKeys,
  '042_reconciliation_schedule': reconciliationSchedule,
  '043_kept_purchase_tokens': keptPurchaseTokens,
  '044_import_triggers': importTriggers,
  '045_provisional_access': provisionalAccess,
  '047_chart_sums': chartSums,
  '048_history_at_event_time': historyAtEventTime,
  '049_receipt_latency': receiptLatency,
  '050_receipt_notify_after_commit': receiptNotifyAfterCommit,
  '051_receipt_renewal_quiet': receiptRenewalQuiet,
  '052_import_limits': importLimits,
};

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(MIGRATIONS),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name],
};

export async function migrateLatest(db: Knex): Promise<void> {
  // Concurrent starters (api + worker) serialise on knex's own migration lock.
  await db.migrate.latest({ migrationSource: source });
}

/** Every table that carries `tenant_id` (RLS forced, tenant policy): the schema's and those added since. */
export const TENANT_TABLES = [
  ...SCHEMA_TENANT_TABLES,
  ...CLIENT_TENANT_TABLES,
  ...OUTBOUND_TENANT_TABLES,
  ...CHANGE_TENANT_TABLES,
  ...outboundDrain.DRAIN_TENANT_TABLES,
  ...overviewRollups.ROLLUP_TENANT_TABLES,
  ...team.TEAM_TENANT_TABLES,
  ...imports.IMPORT_TENANT_TABLES,
  ...supportDesk.GRANT_TENANT_TABLES,
  ...customerEventSequence.SEQUENCE_TENANT_TABLES,
  ...heldChanges.HELD_CHANGE_TENANT_TABLES,
  ...chartHistory.PRODUCT_CHANGE_TENANT_TABLES,
  ...reconciliations.RECONCILIATION_TENANT_TABLES,
  ...provisionalAccess.PROVISIONAL_TENANT_TABLES,
  ...reconciliationSchedule.RECONCILIATION_SCHEDULE_TENANT_TABLES,
  ...chartSums.CHART_SUM_TENANT_TABLES,
  ...importLimits.WORK_LEASE_TENANT_TABLES,
] as const;

/** Names of the migrations the database has applied, oldest first. */
export async function appliedMigrations(db: Knex): Promise<string[]> {
  const [done] = (await db.migrate.list({ migrationSource: source })) as [Array<{ name: string } | string>, unknown[]];
  return done.map((m) => (typeof m === 'string' ? m : m.name));
}
