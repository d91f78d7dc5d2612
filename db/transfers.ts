import type { Knex } from 'knex';
import {
  DEFAULT_TRANSFER_SETTINGS,
  type RestoreBehavior,
  type TransferEvent,
  type TransferSettings,
  type TransferStatus,
} from '../domain/transfers';
import { isStoreProvider, type ProviderId } from '../domain/providers';
import { notifyEntitlementChanged } from './entitlement-notify';
import { lockStorePurchase } from './store-purchases';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import type { Row } from './row';

/**
 * Transfers of a purchase between app users (docs/transfers.md): the tenant's restore settings,
 * the transfer rows, and the move itself — every row a purchase gives access through (its claim,
 * its subscription record, its entitlements, its provisional access) re-pointed from one app user
 * to the other in the caller's tenant transaction, with what was changed kept on the transfer so an
 * undo puts both sides back exactly.
 */

export interface StoredTransferSettings extends TransferSettings {
  /** Null: the tenant never changed the defaults. */
  updated_at: string | null;
}

export async function transferSettings(trx: Knex.Transaction): Promise<StoredTransferSettings> {
  const row = await trx('transfer_settings').first('restore_behavior', 'undo_hours', 'updated_at');
  if (!row) return { ...DEFAULT_TRANSFER_SETTINGS, updated_at: null };
  return {
    restore_behavior: row.restore_behavior as RestoreBehavior,
    undo_hours: Number(row.undo_hours),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** The fields given change; the others keep what they were (or their default). */
export async function saveTransferSettings(
  trx: Knex.Transaction,
  tenantId: string,
  change: Partial<TransferSettings>,
): Promise<StoredTransferSettings> {
  const current = await transferSettings(trx);
  const next = {
    restore_behavior: change.restore_behavior ?? current.restore_behavior,
    undo_hours: change.undo_hours ?? current.undo_hours,
  };
  await trx('transfer_settings')
    .insert({ tenant_id: tenantId, ...next })
    .onConflict('tenant_id')
    .merge({ ...next, updated_at: trx.fn.now() });
  return transferSettings(trx);
}

/** What a move changed, kept on the transfer for its undo. */
export interface MovedRows {
  claim: boolean;
  /** No one had registered the purchase (its record named the holder): the move registered it for the receiver. */
  claim_created?: boolean;
  subscription_ids: string[];
  entitlement_ids: string[];
  provisional_ids: string[];
  /** The receiver's own rows for the same products, which the moved entitlements replaced (whole rows). */
  displaced: Row[];
}

/** Store purchases are claimed by a registration; a web provider's are not (its events name the app user). */
const hasClaim = (p: PurchaseRef) => isStoreProvider(p.provider as ProviderId);

const NONE: MovedRows = { claim: false, subscription_ids: [], entitlement_ids: [], provisional_ids: [], displaced: [] };

export interface PurchaseRef {
  provider: string;
  /**
   * The claim's key (store_purchase_tokens.token_hash); a web provider's purchase has no claim (its
   * events name the app user), and its subscription's external id stands here.
   */
  tokenHash: string;
  /** The subscription record's external id (the purchase key). */
  externalId: string;
}

/**
 * Who holds a purchase now: the app user who registered it, else the one its subscription record
 * names (a buyer a store notification named before anyone registered it). Locks the claim row.
 */
export async function holderOf(
  trx: Knex.Transaction,
  p: PurchaseRef,
): Promise<{ holder: string | null; subscription_id: string | null; is_sandbox: boolean }> {
  const claim = await trx('store_purchase_tokens')
    .where({ provider: p.provider, token_hash: p.tokenHash })
    .forUpdate()
    .first('app_user_id');
  const sub = await trx('subscriptions')
    .where({ provider: p.provider, external_id: p.externalId })
    .first('id', 'app_user_id', 'mode');
  return {
    holder: claim?.app_user_id ?? sub?.app_user_id ?? null,
    subscription_id: sub?.id ?? null,
    is_sandbox: sub ? sub.mode === 'test' : false,
  };
}

/**
 * Re-point the purchase's rows from `from` to `to`: the claim, the subscription record, its
 * entitlements (a row `to` already had for the same product is kept whole in `displaced` and
 * removed, since one row per user and product exists) and `from`'s provisional access for it.
 */
export async function moveAccess(
  trx: Knex.Transaction,
  tenantId: string,
  p: PurchaseRef,
  from: string,
  to: string,
): Promise<MovedRows> {
  await lockStorePurchase(trx, tenantId, p.provider, p.externalId);
  const claims = hasClaim(p);
  const claimed = claims
    ? await trx('store_purchase_tokens')
        .where({ provider: p.provider, token_hash: p.tokenHash, app_user_id: from })
        .update({ app_user_id: to, updated_at: trx.fn.now() })
    : 0;
  // Registered for the receiver when no one had: later store answers then write for them, not the named buyer.
  const created =
    claimed || !claims
      ? []
      : await trx('store_purchase_tokens')
          .insert({ tenant_id: tenantId, provider: p.provider, token_hash: p.tokenHash, app_user_id: to })
          .onConflict(['tenant_id', 'provider', 'token_hash'])
          .ignore()
          .returning('app_user_id');
  const subs: { id: string }[] = await trx('subscriptions')
    .where({ provider: p.provider, external_id: p.externalId, app_user_id: from })
    .update({ app_user_id: to, updated_at: trx.fn.now() }, ['id']);
  const subIds = (
    await trx('subscriptions').where({ provider: p.provider, external_id: p.externalId }).select('id')
  ).map((r: { id: string }) => r.id);
  const ents: Row[] = subIds.length
    ? await trx('entitlements').whereIn('subscription_id', subIds).where({ app_user_id: from }).select('*')
    : [];
  const displaced: Row[] = [];
  for (const e of ents) {
    const theirs = await trx('entitlements')
      .where({ app_user_id: to, provider: e.provider })
      .whereRaw('product_id is not distinct from ?', [e.product_id])
      .first('*');
    if (theirs) {
      displaced.push(theirs);
      await trx('entitlements').where({ id: theirs.id }).del();
    }
    await trx('entitlements').where({ id: e.id }).update({ app_user_id: to, updated_at: trx.fn.now() });
  }
  const prov: { id: string }[] = await trx('provisional_access')
    .where({ provider: p.provider, customer_key: p.externalId, app_user_id: from, kind: 'grant' })
    .update({ app_user_id: to, updated_at: trx.fn.now() }, ['id']);
  await notifyEntitlementChanged(trx, tenantId, [from, to]);
  return {
    claim: claimed > 0,
    ...(created.length ? { claim_created: true } : {}),
    subscription_ids: subs.map((s) => s.id),
    entitlement_ids: ents.map((e) => e.id as string),
    provisional_ids: prov.map((r) => r.id),
    displaced,
  };
}

/**
 * Undo a move: what it re-pointed goes back to `from` (with the state the purchase has now: a
 * renewal or refund since then stays applied), and the receiver's displaced rows come back as they
 * were. A row `from` gained meanwhile for the same product gives way to the purchase's own row.
 */
export async function moveBack(
  trx: Knex.Transaction,
  tenantId: string,
  p: PurchaseRef,
  from: string,
  to: string,
  moved: MovedRows,
): Promise<void> {
  await lockStorePurchase(trx, tenantId, p.provider, p.externalId);
  if (moved.claim)
    await trx('store_purchase_tokens')
      .where({ provider: p.provider, token_hash: p.tokenHash, app_user_id: to })
      .update({ app_user_id: from, updated_at: trx.fn.now() });
  if (moved.claim_created)
    await trx('store_purchase_tokens').where({ provider: p.provider, token_hash: p.tokenHash, app_user_id: to }).del();
  if (moved.subscription_ids.length)
    await trx('subscriptions')
      .whereIn('id', moved.subscription_ids)
      .where({ app_user_id: to })
      .update({ app_user_id: from, updated_at: trx.fn.now() });
  if (moved.entitlement_ids.length) {
    const back: Row[] = await trx('entitlements')
      .whereIn('id', moved.entitlement_ids)
      .where({ app_user_id: to })
      .select('id', 'provider', 'product_id');
    for (const e of back) {
      await trx('entitlements')
        .where({ app_user_id: from, provider: e.provider })
        .whereRaw('product_id is not distinct from ?', [e.product_id])
        .whereNot({ id: e.id })
        .del();
      await trx('entitlements').where({ id: e.id }).update({ app_user_id: from, updated_at: trx.fn.now() });
    }
  }
  for (const d of moved.displaced) await trx('entitlements').insert(d).onConflict('id').ignore();
  if (moved.provisional_ids.length)
    await trx('provisional_access')
      .whereIn('id', moved.provisional_ids)
      .where({ app_user_id: to })
      .update({ app_user_id: from, updated_at: trx.fn.now() });
  await notifyEntitlementChanged(trx, tenantId, [from, to]);
}

const TRANSFER_COLUMNS = [
  'id',
  'status',
  'policy',
  'provider',
  'token_hash',
  'purchase_key',
  'from_app_user_id',
  'to_app_user_id',
  'is_sandbox',
  'moved',
  'created_at',
  'completed_at',
  'decided_at',
  'decided_by',
  'undo_until',
  'window_closed_at',
  'undone_at',
  'undone_by',
];

export async function insertTransfer(
  trx: Knex.Transaction,
  t: {
    tenantId: string;
    status: Extract<TransferStatus, 'pending' | 'completed'>;
    policy: Extract<RestoreBehavior, 'transfer' | 'review'>;
    purchase: PurchaseRef;
    from: string;
    to: string;
    isSandbox: boolean;
    moved?: MovedRows;
    undoHours?: number;
  },
): Promise<Row> {
  const [row] = await trx('transfers')
    .insert({
      tenant_id: t.tenantId,
      status: t.status,
      policy: t.policy,
      provider: t.purchase.provider,
      token_hash: t.purchase.tokenHash,
      purchase_key: t.purchase.externalId,
      from_app_user_id: t.from,
      to_app_user_id: t.to,
      is_sandbox: t.isSandbox,
      moved: JSON.stringify(t.moved ?? NONE),
      ...(t.status === 'completed'
        ? {
            completed_at: trx.fn.now(),
            undo_until: undoUntilSql(trx, t.undoHours ?? 0),
          }
        : {}),
    })
    .returning(TRANSFER_COLUMNS);
  return row;
}

/**
 * Whether a move of this purchase from `from` to `to` was already decided against (rejected, or
 * undone): a web provider's events keep naming the new app user, and must not ask again.
 */
export async function refusedBefore(trx: Knex.Transaction, p: PurchaseRef, from: string, to: string): Promise<boolean> {
  const row = await trx('transfers')
    .where({ provider: p.provider, token_hash: p.tokenHash, from_app_user_id: from, to_app_user_id: to })
    .whereIn('status', ['rejected', 'undone'])
    .first('id');
  return row !== undefined;
}

/**
 * A refusal of the move from `from` to `to` of this purchase under `policy`, kept once: true when this
 * call recorded it, false when it was recorded before (the provider's events repeat the name they carry).
 */
export async function recordRefusal(
  trx: Knex.Transaction,
  tenantId: string,
  p: PurchaseRef,
  from: string,
  to: string,
  policy: RestoreBehavior,
): Promise<boolean> {
  const inserted = await trx('transfer_refusals')
    .insert({
      tenant_id: tenantId,
      provider: p.provider,
      token_hash: p.tokenHash,
      from_app_user_id: from,
      to_app_user_id: to,
      policy,
    })
    .onConflict(['tenant_id', 'provider', 'token_hash', 'from_app_user_id', 'to_app_user_id'])
    .ignore()
    .returning('created_at');
  return inserted.length > 0;
}

/** The pending transfer of a purchase, if one waits. */
export async function pendingTransferOf(trx: Knex.Transaction, p: PurchaseRef): Promise<Row | undefined> {
  return trx('transfers')
    .where({ provider: p.provider, token_hash: p.tokenHash, status: 'pending' })
    .first(TRANSFER_COLUMNS);
}

export async function pendingTransferCount(trx: Knex.Transaction): Promise<number> {
  const row = await trx('transfers').where({ status: 'pending' }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** The purchase a transfer row moves. */
export const purchaseOfTransfer = (t: Row): PurchaseRef => ({
  provider: t.provider,
  tokenHash: t.token_hash,
  externalId: t.purchase_key,
});

/** One transfer, locked for a decision, with the database's clock (`db_now`) the decision is judged by. */
export async function lockTransfer(trx: Knex.Transaction, id: string): Promise<Row | undefined> {
  return trx('transfers')
    .where({ id })
    .forUpdate()
    .first([...TRANSFER_COLUMNS, trx.raw('now() as db_now')]);
}

export async function updateTransfer(trx: Knex.Transaction, id: string, change: Record<string, unknown>): Promise<Row> {
  const [row] = await trx('transfers')
    .where({ id })
    .update({ ...change, updated_at: trx.fn.now() })
    .returning(TRANSFER_COLUMNS);
  return row;
}

/** `now() + hours` as the database's clock says it: the undo window of a transfer completed now. */
export const undoUntilSql = (trx: Knex.Transaction, hours: number) =>
  trx.raw('now() + make_interval(secs => ?)', [Math.round(hours * 3600 * 1000) / 1000]);

/**
 * The undo window ended (the transfer's timer fired): the transfer stands. Answers whether the database clock
 * agrees.
 */
export async function closeUndoWindow(
  trx: Knex.Transaction,
  id: string,
): Promise<'closed' | 'not_due' | 'not_completed' | 'missing'> {
  const t = await trx('transfers').where({ id }).forUpdate().first('status', 'undo_until', trx.raw('now() as now'));
  if (!t) return 'missing';
  if (t.status !== 'completed') return 'not_completed';
  if (t.undo_until && new Date(t.undo_until) > new Date(t.now)) return 'not_due';
  await trx('transfers').where({ id }).whereNull('window_closed_at').update({ window_closed_at: trx.fn.now() });
  return 'closed';
}

export async function getTransfer(src: PageSource, id: string): Promise<Row | undefined> {
  const found = await pageFromSql(
    src,
    { table: 'transfers', columns: 'transfers.*', from: 'transfers', filters: { id } },
    { limit: 1, offset: 0 },
    rows,
  );
  return found.data[0];
}

/** The tenant's transfers newest first, or those one app user gave or received. */
export function transferPage(src: PageSource, appUserId: string | undefined, page: PageRequest): Promise<RowPage> {
  return pageFromSql(
    src,
    appUserId === undefined
      ? { table: 'transfers', columns: 'transfers.*', from: 'transfers', filters: {} }
      : {
          table: 'transfers',
          columns: 'transfers.*',
          from: '(select * from transfers where $1 in (from_app_user_id, to_app_user_id)) transfers',
          fromValues: [appUserId],
          filters: {},
        },
    page,
    rows,
  );
}

/**
 * A transfer event (docs/outbound-webhooks.md), recorded in the transaction that changed the
 * transfer, about the app user who holds the purchase afterwards (the pending one: about the
 * app user asking for it).
 */
export async function recordTransferEvent(
  trx: Knex.Transaction,
  tenantId: string,
  type: TransferEvent,
  t: Row,
): Promise<void> {
  const holder = type === 'transfer.completed' || type === 'transfer.pending' ? t.to_app_user_id : t.from_app_user_id;
  const previous = type === 'transfer.undone' ? t.to_app_user_id : t.from_app_user_id;
  const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
  await trx.raw('select record_outbound_event(?, ?, ?, ?::jsonb)', [
    tenantId,
    type,
    holder,
    JSON.stringify({
      transfer_id: t.id,
      status: t.status,
      app_user_id: holder,
      previous_app_user_id: previous,
      from_app_user_id: t.from_app_user_id,
      to_app_user_id: t.to_app_user_id,
      provider: t.provider,
      is_sandbox: t.is_sandbox,
      undo_until: iso(t.undo_until),
    }),
  ]);
}
