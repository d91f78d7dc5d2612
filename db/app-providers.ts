import type { Knex } from 'knex';
import { chooseConnection } from '../domain/connection-choice';
import { isUuid } from '../domain/ids';
import type { ProviderId } from '../domain/providers';
import {
  assertProvider,
  ConnectionError,
  currentTenant,
  getConnectionSafe,
  listConnectionsSafe,
  type ConnectionCandidate,
  type SafeConnection,
} from './connections';

/**
 * Which connection each app uses per provider: at most one per (app, provider), pointing at
 * one of the account's connections (db/connections.ts). Every function takes a tenant
 * transaction (withTenant), so RLS scopes it.
 */

const T = 'app_providers';

/** The connection an app uses for a provider, or null when the app has none attached. */
export async function connectionForApp(
  trx: Knex.Transaction,
  appId: string,
  provider: ProviderId,
): Promise<SafeConnection | null> {
  if (!isUuid(appId)) return null;
  const link = await trx(T).where({ app_id: appId, provider }).first('connection_id');
  return link ? getConnectionSafe(trx, link.connection_id) : null;
}

export interface Attachment {
  id: string;
  app_id: string;
  provider: ProviderId;
  connection_id: string;
  account_ref: string;
  label: string;
}

export interface AttachResult {
  attachment: Attachment;
  created: boolean;
  /** True when an explicit account_id moved the app to a different connection. */
  replaced: boolean;
}

const candidate = (c: SafeConnection): ConnectionCandidate => ({
  id: c.id,
  label: c.label,
  account_ref: c.account_ref,
  is_default: c.is_default,
});

async function resolveConnection(
  trx: Knex.Transaction,
  provider: ProviderId,
  accountId?: string,
): Promise<SafeConnection> {
  const choice = chooseConnection(await listConnectionsSafe(trx, { provider }), provider, accountId);
  if (choice.ok) return choice.connection;
  throw new ConnectionError(choice.code, choice.message, choice.candidates.map(candidate));
}

/**
 * billing_attach_provider: attach one of the account's connections to an app. Omitted
 * account_id → the provider's default, else the only connection, else a refusal listing the
 * candidates. Idempotent: an existing attachment comes back with created: false (and is only
 * moved when an explicit account_id names a different connection).
 */
export async function attachToApp(
  trx: Knex.Transaction,
  appId: string,
  provider: ProviderId,
  accountId?: string,
): Promise<AttachResult> {
  assertProvider(provider);
  const tenantId = await currentTenant(trx);
  const app = isUuid(appId) ? await trx('apps').where({ id: appId }).first('id') : undefined;
  if (!app) throw new ConnectionError('app_not_found', 'no such app on this account');

  const existing = await trx(T).where({ app_id: appId, provider }).first('id', 'connection_id');
  if (existing && accountId === undefined)
    return { attachment: await attachmentView(trx, existing.id), created: false, replaced: false };

  const conn = await resolveConnection(trx, provider, accountId);
  if (existing) {
    if (existing.connection_id === conn.id)
      return { attachment: await attachmentView(trx, existing.id), created: false, replaced: false };
    await trx(T).where({ id: existing.id }).update({ connection_id: conn.id, updated_at: trx.fn.now() });
    return { attachment: await attachmentView(trx, existing.id), created: false, replaced: true };
  }
  const inserted = await trx(T)
    .insert({ tenant_id: tenantId, app_id: appId, provider, connection_id: conn.id })
    .onConflict(['app_id', 'provider'])
    .ignore()
    .returning('id');
  if (inserted.length > 0)
    return { attachment: await attachmentView(trx, inserted[0].id), created: true, replaced: false };
  // A concurrent attach won the race: theirs stands, as a re-run would see it.
  const raced = await trx(T).where({ app_id: appId, provider }).first('id');
  return { attachment: await attachmentView(trx, raced.id), created: false, replaced: false };
}

async function attachmentView(trx: Knex.Transaction, attachmentId: string): Promise<Attachment> {
  return trx(`${T} as ap`)
    .join('provider_connections as pc', 'pc.id', 'ap.connection_id')
    .where('ap.id', attachmentId)
    .first('ap.id', 'ap.app_id', 'ap.provider', 'ap.connection_id', 'pc.account_ref', 'pc.label');
}
