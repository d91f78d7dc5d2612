// Written by scripts/operations-table.ts from every db/migrations/NNN_name.ts; do not edit.
// `npm test` and `npm run build` rewrite it; `npm run checks` fails when it is stale.
import type { Knex } from 'knex';
import * as m001Baseline from './001_baseline';
import * as m052ImportLimits from './052_import_limits';
import * as m053ApiKeyMinter from './053_api_key_minter';
import * as m054SignInFailures from './054_sign_in_failures';
import * as m061ReceiptOneWrite from './061_receipt_one_write';
import * as m062CustomerNotes from './062_customer_notes';

/** The migrations by the name knex records, oldest first (listed, not discovered on disk, so tsx, vitest and bundles load the same). */
export const MIGRATIONS: Record<string, Knex.Migration> = {
  '001_baseline': m001Baseline,
  '052_import_limits': m052ImportLimits,
  '053_api_key_minter': m053ApiKeyMinter,
  '054_sign_in_failures': m054SignInFailures,
  '061_receipt_one_write': m061ReceiptOneWrite,
  '062_customer_notes': m062CustomerNotes,
};
