import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Vault } from '../vault/vault';
import { storableText } from '../domain/outbound-limits';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import type { Row } from './row';

/**
 * The tenant's outbound webhook endpoints (`webhook_endpoints`), in the caller's tenant
 * transaction. Signing secrets are vault envelopes bound to their row and column (AAD); the
 * plaintext leaves this file only to the caller that mints it (shown once) and to the delivery
 * activity that signs with it.
 */

/** Standard Webhooks secrets: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** The vault-encrypted columns of `webhook_endpoints` (db/reencrypt.ts moves them to a new MASTER_KEY entry). */
export const ENDPOINT_ENCRYPTED_FIELDS = ['secret_enc', 'previous_secret_enc'] as const;
type EncryptedColumn = (typeof ENDPOINT_ENCRYPTED_FIELDS)[number];

export const endpointSecretAad = (tenantId: string, id: string, column: EncryptedColumn) =>
  `${tenantId}:${id}:webhook_endpoints.${column}`;
const aad = endpointSecretAad;

/** What every read of an endpoint selects: never the envelopes. */
const PUBLIC_COLUMNS = [
  'id',
  'tenant_id',
  'url',
  'description',
  'event_types',
  'enabled',
  'disabled_reason',
  'previous_secret_expires_at',
  'secret_rotated_at',
  'created_at',
  'updated_at',
];

export interface NewEndpoint {
  tenantId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  /** The task queue whose worker dispatches its deliveries (the creating process's). */
  taskQueue: string;
}

/**
 * How many endpoints the tenant has, counted under a transaction-scoped lock on the tenant's
 * endpoints: two creations at once are counted one after the other, so a cap checked on this
 * count holds (domain/outbound-limits.ts).
 */
export async function lockedEndpointCount(trx: Knex.Transaction, tenantId: string): Promise<number> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || ?, 0))`, [tenantId]);
  const row = await trx('webhook_endpoints').count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Create an endpoint with a fresh secret; answers the row and the secret (to be shown once). */
export async function insertEndpoint(
  trx: Knex.Transaction,
  vault: Vault,
  e: NewEndpoint,
): Promise<{ row: Row; secret: string }> {
  const id = crypto.randomUUID();
  const secret = generateSigningSecret();
  const [row] = await trx('webhook_endpoints')
    .insert({
      id,
      tenant_id: e.tenantId,
      url: e.url,
      description: e.description,
      event_types: e.eventTypes,
      task_queue: e.taskQueue,
      secret_enc: vault.encrypt(secret, aad(e.tenantId, id, 'secret_enc')),
    })
    .returning(PUBLIC_COLUMNS);
  return { row, secret };
}

export function endpointPage(src: PageSource, page: PageRequest): Promise<RowPage> {
  const columns = PUBLIC_COLUMNS.map((c) => `webhook_endpoints.${c}`).join(', ');
  return pageFromSql(src, { table: 'webhook_endpoints', columns, from: 'webhook_endpoints', filters: {} }, page, rows);
}

export async function endpointById(trx: Knex.Transaction, id: string): Promise<Row | undefined> {
  return trx('webhook_endpoints').where({ id }).first(PUBLIC_COLUMNS);
}

export interface EndpointPatch {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  enabled?: boolean;
  /** Why it is disabled (a person's choice, or the deliveries that failed for the whole retry window). */
  disabledReason?: string | null;
}

export async function updateEndpoint(trx: Knex.Transaction, id: string, p: EndpointPatch): Promise<Row | undefined> {
  const set: Record<string, unknown> = { updated_at: trx.fn.now() };
  if (p.url !== undefined) set.url = p.url;
  if (p.description !== undefined) set.description = p.description;
  if (p.eventTypes !== undefined) set.event_types = p.eventTypes;
  if (p.enabled !== undefined) {
    set.enabled = p.enabled;
    set.disabled_reason = p.enabled ? null : storableText(p.disabledReason ?? 'disabled by a person', 500);
  }
  const [row] = await trx('webhook_endpoints').where({ id }).update(set).returning(PUBLIC_COLUMNS);
  return row;
}

export async function deleteEndpoint(trx: Knex.Transaction, id: string): Promise<boolean> {
  return (await trx('webhook_endpoints').where({ id }).del()) > 0;
}

/**
 * A new secret; the current one keeps signing beside it for `overlapSeconds` (0: at once
 * retired). Answers the row and the new secret (shown once), or undefined for no such endpoint.
 */
export async function rotateEndpointSecret(
  trx: Knex.Transaction,
  vault: Vault,
  id: string,
  overlapSeconds: number,
): Promise<{ row: Row; secret: string } | undefined> {
  const current = await trx('webhook_endpoints').where({ id }).forUpdate().first('tenant_id', 'secret_enc');
  if (!current) return undefined;
  const old = vault.decrypt(current.secret_enc, aad(current.tenant_id, id, 'secret_enc'));
  const secret = generateSigningSecret();
  const [row] = await trx('webhook_endpoints')
    .where({ id })
    .update({
      secret_enc: vault.encrypt(secret, aad(current.tenant_id, id, 'secret_enc')),
      previous_secret_enc:
        overlapSeconds > 0 ? vault.encrypt(old, aad(current.tenant_id, id, 'previous_secret_enc')) : null,
      previous_secret_expires_at:
        overlapSeconds > 0 ? trx.raw(`now() + (? * interval '1 second')`, [overlapSeconds]) : null,
      secret_rotated_at: trx.fn.now(),
      updated_at: trx.fn.now(),
    })
    .returning(PUBLIC_COLUMNS);
  return { row, secret };
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
export async function signingSecrets(trx: Knex.Transaction, vault: Vault, id: string): Promise<string[]> {
  const r = await trx('webhook_endpoints')
    .where({ id })
    .first(
      'tenant_id',
      'secret_enc',
      trx.raw('case when previous_secret_expires_at > now() then previous_secret_enc end as previous_secret_enc'),
    );
  if (!r) return [];
  const out = [vault.decrypt(r.secret_enc, aad(r.tenant_id, id, 'secret_enc'))];
  if (r.previous_secret_enc)
    out.push(vault.decrypt(r.previous_secret_enc, aad(r.tenant_id, id, 'previous_secret_enc')));
  return out;
}
