/**
 * The export's tables and columns (docs/exports.md): one file per table, the schema versioned as a
 * whole. A column added keeps the version; a column renamed, removed or changing meaning raises it.
 * The statements that read them are db/exports.ts; the file writer runtime/table-file.ts.
 */
export const EXPORT_SCHEMA_VERSION = 1;

export const EXPORT_FORMATS = ['parquet', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** `timestamp`: an instant (UTC); `json`: JSON text. */
export type ExportColumnType = 'text' | 'bigint' | 'boolean' | 'timestamp' | 'json';

export interface ExportColumn {
  name: string;
  type: ExportColumnType;
  description: string;
}

export interface ExportTable {
  name: string;
  description: string;
  columns: readonly ExportColumn[];
}

const c = (name: string, type: ExportColumnType, description: string): ExportColumn => ({ name, type, description });

const ID = c('id', 'text', 'the row’s id (uuid)');
const APP_USER = c('app_user_id', 'text', 'the app user id your app gave the SDK');
const CREATED = c('created_at', 'timestamp', 'when the row was made');
const UPDATED = c('updated_at', 'timestamp', 'when the row last changed (what `since` compares)');

export const EXPORT_TABLES: readonly ExportTable[] = [
  {
    name: 'customers',
    description: 'each app user with a chain of events, and the chain’s head',
    columns: [
      APP_USER,
      c('last_sequence', 'bigint', 'the `sequence` of the app user’s last event'),
      c('last_hash', 'text', 'the `hash` of that event (null: no event since chains began)'),
    ],
  },
  {
    name: 'subscriptions',
    description: 'every subscription record, web and store',
    columns: [
      ID,
      APP_USER,
      c('provider', 'text', 'psp_a, psp_b, psp_c, store_android or store_ios'),
      c('mode', 'text', 'live or test'),
      c('status', 'text', 'trialing, active, past_due, canceled, refunded or expired'),
      c('product_id', 'text', 'the product (uuid), when known'),
      c('sku', 'text', 'the product’s SKU'),
      c('external_id', 'text', 'the provider’s subscription id'),
      c('country', 'text', 'ISO 3166 alpha-2, when the provider said'),
      c('trial_started_at', 'timestamp', ''),
      c('trial_ended_at', 'timestamp', ''),
      c('current_period_end', 'timestamp', ''),
      c('canceled_at', 'timestamp', ''),
      CREATED,
      UPDATED,
    ],
  },
  {
    name: 'subscription_changes',
    description: 'each status a subscription took (transactions: trials, conversions, renewals ended, refunds)',
    columns: [
      ID,
      c('subscription_id', 'text', 'the subscription (uuid)'),
      c('provider', 'text', ''),
      c('mode', 'text', ''),
      c('from_status', 'text', 'null: the subscription was new'),
      c('to_status', 'text', ''),
      c('changed_at', 'timestamp', 'when the change took hold (what `since` compares)'),
    ],
  },
  {
    name: 'entitlements',
    description: 'paid access, one row per app user and subscription',
    columns: [
      ID,
      APP_USER,
      c('provider', 'text', ''),
      c('product_id', 'text', ''),
      c('sku', 'text', ''),
      c('subscription_id', 'text', ''),
      c('state', 'text', 'active, grace_period, expired or revoked'),
      c('is_sandbox', 'boolean', 'a test purchase'),
      c('expires_at', 'timestamp', ''),
      c('grace_until', 'timestamp', ''),
      CREATED,
      UPDATED,
    ],
  },
  {
    name: 'grants',
    description: 'access given by hand (docs/support.md)',
    columns: [
      ID,
      APP_USER,
      c('product_id', 'text', ''),
      c('sku', 'text', ''),
      c('reason', 'text', ''),
      c('state', 'text', 'active, expired or revoked'),
      c('expires_at', 'timestamp', ''),
      c('granted_by', 'text', 'the key or person (id)'),
      c('revoked_by', 'text', ''),
      c('ended_at', 'timestamp', ''),
      CREATED,
      UPDATED,
    ],
  },
  {
    name: 'events',
    description: 'every recorded outbound event, with its chain fields (docs/event-proofs.md)',
    columns: [
      ID,
      c('type', 'text', 'the event type'),
      APP_USER,
      c('chain', 'text', 'the app user’s chain (an opaque id; null: not an event about an app user)'),
      c('sequence', 'bigint', 'null: not an event about an app user'),
      c('prev_hash', 'text', ''),
      c('hash', 'text', ''),
      c('body', 'json', 'the body exactly as delivered'),
      CREATED,
    ],
  },
  {
    name: 'erasures',
    description: 'each app user id erased (docs/exports.md, "Erasures"): apply it to rows held from earlier exports',
    columns: [
      c('erased_as', 'text', 'the pseudonym the erased customer’s rows are exported under from then on'),
      c('app_user_id_sha256', 'text', 'hex SHA-256 of the erased app user id (UTF-8): match your rows by it'),
      c('chain', 'text', 'the `chain` the erased id’s events had in earlier exports'),
      c('erased_chain', 'text', 'the `chain` the same events have from then on (the pseudonym’s)'),
      c('erased_at', 'timestamp', 'when it was erased (what `since` compares)'),
    ],
  },
];

export const EXPORT_TABLE_NAMES = EXPORT_TABLES.map((t) => t.name);

/** A file's name: `<table>.v<version>.<format>`. */
export function exportFileName(table: string, format: ExportFormat): string {
  return `${table}.v${EXPORT_SCHEMA_VERSION}.${format}`;
}

/** Rows read from the database per page while a file is written (the activity's bound). */
export const EXPORT_PAGE_ROWS = 5_000;
/** Bytes per stored part of a file (each part one row; a download streams them one by one). */
export const EXPORT_PART_BYTES = 4 * 1024 * 1024;
