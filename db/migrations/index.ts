// Written by scripts/operations-table.ts from every db/migrations/NNN_name.ts; do not edit.
// `npm test` and `npm run build` rewrite it; `npm run checks` fails when it is stale.
import type { Knex } from 'knex';
import * as m001Baseline from './001_baseline';
import * as m052ImportLimits from './052_import_limits';
import * as m053ApiKeyMinter from './053_api_key_minter';
import * as m054SignInFailures from './054_sign_in_failures';
import * as m056Revenuecat from './056_revenuecat';
import * as m057Transfers from './057_transfers';
import * as m058SigningKeys from './058_signing_keys';
import * as m059AssistantSignIn from './059_assistant_sign_in';
import * as m060EventProofs from './060_event_proofs';
import * as m061ReceiptOneWrite from './061_receipt_one_write';
import * as m062CustomerNotes from './062_customer_notes';
import * as m065GrantTokenInvalidated from './065_grant_token_invalidated';
import * as m067ExportDestinations from './067_export_destinations';
import * as m069CustomerErasure from './069_customer_erasure';
import * as m071OauthClientUse from './071_oauth_client_use';
import * as m072RevenuecatKeyLastUsed from './072_revenuecat_key_last_used';
import * as m073TransferRefusals from './073_transfer_refusals';
import * as m074CustomerEventsFollowAliases from './074_customer_events_follow_aliases';
import * as m075CustomerMergedEvents from './075_customer_merged_events';
import * as m076ErasurePseudonyms from './076_erasure_pseudonyms';
import * as m079ChainHashCost from './079_chain_hash_cost';

/** The migrations by the name knex records, oldest first (listed: tsx, vitest and bundles load the same). */
export const MIGRATIONS: Record<string, Knex.Migration> = {
  '001_baseline': m001Baseline,
  '052_import_limits': m052ImportLimits,
  '053_api_key_minter': m053ApiKeyMinter,
  '054_sign_in_failures': m054SignInFailures,
  '056_revenuecat': m056Revenuecat,
  '057_transfers': m057Transfers,
  '058_signing_keys': m058SigningKeys,
  '059_assistant_sign_in': m059AssistantSignIn,
  '060_event_proofs': m060EventProofs,
  '061_receipt_one_write': m061ReceiptOneWrite,
  '062_customer_notes': m062CustomerNotes,
  '065_grant_token_invalidated': m065GrantTokenInvalidated,
  '067_export_destinations': m067ExportDestinations,
  '069_customer_erasure': m069CustomerErasure,
  '071_oauth_client_use': m071OauthClientUse,
  '072_revenuecat_key_last_used': m072RevenuecatKeyLastUsed,
  '073_transfer_refusals': m073TransferRefusals,
  '074_customer_events_follow_aliases': m074CustomerEventsFollowAliases,
  '075_customer_merged_events': m075CustomerMergedEvents,
  '076_erasure_pseudonyms': m076ErasurePseudonyms,
  '079_chain_hash_cost': m079ChainHashCost,
};
