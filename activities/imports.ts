import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { getConnectionSafe } from '../db/connections';
import { loadCredential } from '../db/connection-service';
import {
  finishImport,
  forgetImportFile,
  importById,
  insertImportItems,
  pendingItems,
  recordImportPage,
  recordListedItems,
  recordOutcome,
  type ImportItem,
} from '../db/imports';
import { withTenant } from '../db/tenant-tx';
import {
  IMPORT_ITEMS_IN_FLIGHT,
  IMPORT_STORE_LINES_IN_FLIGHT,
  orderingGroups,
  runGrouped,
} from '../domain/import-concurrency';
import { snapshotEvents } from '../domain/provider-snapshot';
import type { Mode, ProviderId, StoreProviderId, WebProviderId } from '../domain/providers';
import { registrationRefusal, type PurchaseRef, type RegistrationRefusal } from '../domain/store-purchase';
import type { LifecycleEvent } from '../domain/subscription';
import { createPacer } from '../providers/pacing';
import { ProviderError } from '../providers/errors';
import type { ProviderContext } from '../providers/types';
import type { ActivityDeps } from './deps';
import { toActivityFailure } from './provider-failures';
import { createStoreReader, keepableSealed, storeUserFor, writeStoreRead, type ReadOutcome } from './store-purchases';
import { claimStorePurchaseToken } from '../db/store-purchases';
import { sealPurchase, tokenHashOfKey } from '../providers/purchase-ref';
import { importFileAad } from '../domain/import-file';
import { unreadImportFile } from '../db/imports';
import { parseImportFile } from './import-file';
import { createWorkTurns } from './work-turns';
import type { Parked } from '../domain/import-concurrency';
import { entitlementWrites } from '../runtime/metrics';
import { inSpan } from '../runtime/tracing';

/** Subscriptions per provider page (Stripe and Razorpay allow 100; Paddle 200). */
export const IMPORT_PAGE_SIZE = 100;
/**
 * File lines per activity. Each is one paced store lookup and heartbeats, so a page's length
 * only sets how often the run pauses between activities (the page's last writes, the next
 * page's pick-up): 500 lines are about 10 s of Play's allowance (100 s of the App Store
 * sandbox's), so that pause is a few % of the run, and a page's rows stay small in memory.
 */
const FILE_PAGE_SIZE = 500;
/** A line's lookups refused for the rate limit before its page fails (and is retried). */
const LOOKUP_ATTEMPTS = 3;

/** Our own words for a store's refusal of one line: the store's answer itself is not echoed. */
function lineRefusal(r: RegistrationRefusal): string {
  switch (r.error) {
    case 'purchase_not_found':
      return "The store does not know this purchase for this app (another app's or bundle's, or mistyped).";
    case 'purchase_token_reused':
      return r.detail ?? 'This purchase belongs to another app user.';
    case 'purchase_pending':
      return 'The store has not been paid for this purchase yet.';
    case 'invalid_request':
      return 'The connection cannot read purchases at this store.';
    default:
      return 'The store refused this purchase.';
  }
}

export function createImportActivities(deps: ActivityDeps) {
  const { db, config, vault, adapters, pacer = createPacer() } = deps;
  const reader = createStoreReader(deps);
  const inTenantTurn = createWorkTurns(deps);

  /** The import, if it is this tenant's and still running (a page of a finished or foreign import does nothing). */
  const running = (tenantId: string, importId: string) =>
    withTenant(db, tenantId, async (trx) => (await importById(trx, importId))?.status === 'running');

  return {
    /**
     * One page of a web provider's subscriptions: each becomes the events of its customer's
     * lifecycle workflow (the same rules and entitlement writer as a webhook), tagged imported.
     * Paced under the provider's documented limit, on the same allowance as the sync's calls.
     */
    async importProviderPage(input: ProviderPageInput): Promise<{ seen: number; next: string | null } | Parked> {
      return inTenantTurn(input.tenantId, () => providerPage(input));
    },

    /**
     * The next lines of an uploaded file: each identifier is looked up with the store's server
     * API (Play purchases.subscriptionsv2.get, App Store Get All Subscription Statuses), claimed
     * for the file's app user and written like an SDK registration, quietly. A line the store
     * does not confirm is refused with the reason; the rest go on. The first page reads the
     * file's lines (readFileLines).
     */
    async importFilePage(input: FilePageInput): Promise<{ lastLine: number | null } | Parked> {
      return inTenantTurn(input.tenantId, () => filePage(input));
    },

    async finishImportRun(input: {
      tenantId: string;
      importId: string;
      status: 'succeeded' | 'failed';
      failure: string | null;
    }): Promise<void> {
      await withTenant(db, input.tenantId, (trx) => finishImport(trx, input.importId, input.status, input.failure));
    },
  };

  /** importProviderPage's work, inside the tenant's turn. */
  async function providerPage(input: ProviderPageInput): Promise<{ seen: number; next: string | null }> {
    {
      const handOver = deps.handOverLifecycle;
      if (!handOver) throw new Error('imports need the worker’s lifecycle hand-over');
      if (!(await running(input.tenantId, input.importId))) return { seen: 0, next: null };
      const adapter = adapters[input.provider];
      if (!adapter.listSubscriptions) throw new Error(`${input.provider} has no subscription list`);
      const ctx: ProviderContext = await withTenant(db, input.tenantId, async (trx) => {
        const conn = await getConnectionSafe(trx, input.connectionId);
        if (!conn) throw new Error('the import’s connection is gone');
        return {
          baseUrl: config.providerBaseUrls[input.provider],
          mode: input.mode,
          credential: await loadCredential(trx, vault, input.connectionId, input.mode),
          accountRef: conn.account_ref,
          pace: pacer.pace(input.provider, input.mode, conn.account_ref),
        };
      });
      let page;
      try {
        page = await adapter.listSubscriptions(ctx, input.cursor, IMPORT_PAGE_SIZE);
      } catch (err) {
        if (err instanceof ProviderError && err.errorClass === 'rate_limited')
          pacer.holdOff(input.provider, input.mode, ctx.accountRef, err.retryAfterMs ?? 1000);
        throw toActivityFailure(err);
      }
      const readAt = new Date().toISOString();
      const byCustomer = new Map<string, LifecycleEvent[]>();
      for (const snap of page.snapshots) {
        const key = snap.customer_id ?? snap.subscription_id;
        byCustomer.set(key, [...(byCustomer.get(key) ?? []), ...snapshotEvents(snap, readAt, 'import')]);
      }
      // One hand-over per customer (its events in the page's order), a few customers at a time.
      const customers = [...byCustomer];
      await runGrouped(
        customers,
        customers.map(([customerKey]) => customerKey),
        IMPORT_ITEMS_IN_FLIGHT,
        async ([customerKey, events]) => {
          await handOver({ tenantId: input.tenantId, provider: input.provider, customerKey }, events);
          heartbeat();
        },
      );
      const items: ImportItem[] = page.snapshots.map((s, i) => ({
        line: input.listed + i + 1,
        provider: input.provider,
        ref: s.subscription_id,
        app_user_id: s.app_user_id,
        outcome: 'imported',
      }));
      await withTenant(db, input.tenantId, async (trx) => {
        await recordListedItems(trx, input.tenantId, input.importId, items);
        await recordImportPage(trx, input.importId, page.next);
      });
      return { seen: page.seen, next: page.next };
    }
  }

  async function filePage(input: FilePageInput): Promise<{ lastLine: number | null }> {
    {
      if (!(await running(input.tenantId, input.importId))) return { lastLine: null };
      await readFileLines(input.tenantId, input.importId);
      const rows = await withTenant(db, input.tenantId, (trx) =>
        pendingItems(trx, input.importId, input.afterLine, FILE_PAGE_SIZE),
      );
      if (rows.length === 0) return { lastLine: null };
      // Lines run IMPORT_STORE_LINES_IN_FLIGHT at a time, each lookup waiting for the store's
      // pacer, which (not the width) sets the rate: at the store's documented limit. The lines of
      // one app user or one purchase run in file order. Each line's claim, write and outcome are
      // one transaction keyed by (import, line), so a page run again after a crash skips the
      // lines already done and never half-writes one.
      const contexts = new Map<string, Promise<ProviderContext | { refusal: RegistrationRefusal }>>();
      const contextFor = (provider: StoreProviderId, connectionId: string, mode: Mode | null) => {
        const key = `${provider}:${mode ?? 'default'}`;
        let c = contexts.get(key);
        if (!c) {
          c = reader.contextOrRefusal(input.tenantId, provider, connectionId, mode, (m, accountRef) =>
            pacer.pace(provider, m, accountRef, 'lookup'),
          );
          contexts.set(key, c);
        }
        return c;
      };
      const groups = orderingGroups(rows, (row) => [
        row.app_user_id ? `user:${row.app_user_id}` : `line:${row.line}`,
        `purchase:${row.provider}:${row.ref}`,
      ]);
      await runGrouped(rows, groups, IMPORT_STORE_LINES_IN_FLIGHT, async (row) => {
        await importLine(input.tenantId, input.importId, input.connections, row, contextFor);
        heartbeat();
      });
      await withTenant(db, input.tenantId, (trx) => recordImportPage(trx, input.importId, null));
      return { lastLine: rows[rows.length - 1].line };
    }
  }

  /**
   * The uploaded file, read once into its lines (refused ones with their reason, Play tokens
   * sealed, keyed by their hash), and its text forgotten, in one transaction: a retried page after
   * a crash finds the lines there and the text gone. Parsed outside the transaction, a chunk of
   * lines at a time, so the activity's process keeps answering while it runs.
   */
  async function readFileLines(tenantId: string, importId: string): Promise<void> {
    const unread = await withTenant(db, tenantId, (trx) => unreadImportFile(trx, importId));
    if (!unread) return;
    const format = unread.source === 'revenuecat' ? 'revenuecat' : (unread.provider as StoreProviderId);
    const csv = vault.decrypt(unread.file_sealed, importFileAad(tenantId, importId));
    const file = await parseImportFile(csv, format, () => heartbeat());
    const items: ImportItem[] = [
      ...file.rows.map((r) => {
        const ref = sealPurchase(vault, tenantId, r.provider, r.ref);
        return {
          line: r.line,
          provider: r.provider,
          ref: ref.key,
          sealed: ref.sealed ?? null,
          app_user_id: r.app_user_id,
        };
      }),
      ...file.refused.map((r) => ({
        line: r.line,
        provider: format === 'revenuecat' ? ('store_ios' as const) : format,
        ref: '',
        outcome: 'refused' as const,
        reason: r.reason,
      })),
    ];
    await withTenant(db, tenantId, async (trx) => {
      // Another attempt of this page may have read it meanwhile: the lock tells.
      if (!(await unreadImportFile(trx, importId))) return;
      await insertImportItems(trx, tenantId, importId, items);
      await forgetImportFile(trx, importId);
    });
  }

  /** One line: looked up, then claimed, written and given its outcome in one tenant transaction. */
  async function importLine(
    tenantId: string,
    importId: string,
    connections: Partial<Record<ProviderId, string>>,
    row: ImportItem,
    contextFor: (
      provider: StoreProviderId,
      connectionId: string,
      mode: Mode | null,
    ) => Promise<ProviderContext | { refusal: RegistrationRefusal }>,
  ): Promise<void> {
    const refuse = (reason: string) =>
      withTenant(db, tenantId, (trx) => recordOutcome(trx, importId, row.line, 'refused', reason));
    const provider = row.provider as StoreProviderId;
    const connectionId = connections[provider];
    if (!connectionId) return refuse(`No proven ${provider} connection to look this purchase up with.`);
    const purchase: PurchaseRef = row.sealed ? { key: row.ref, sealed: row.sealed } : { key: row.ref };
    const read = async (mode: Mode | null): Promise<ReadOutcome> => {
      const ctx = await contextFor(provider, connectionId, mode);
      if ('refusal' in ctx) return { ok: false, refusal: ctx.refusal };
      for (let attempt = 1; ; attempt++) {
        try {
          return await reader.read(ctx, { tenantId, provider, connectionId, mode, purchase });
        } catch (err) {
          // A 429 (arrivals bunched past the pacer's margin): the allowance is held for the
          // store's delay and its margin widens, then the line asks again; after a few, the page
          // fails and its activity's retry takes over (the lines done stay done).
          const limited = err instanceof ApplicationFailure && err.type === 'ProviderRateLimited';
          if (!limited || attempt >= LOOKUP_ATTEMPTS) throw err;
          const ms = typeof err.nextRetryDelay === 'number' ? err.nextRetryDelay : 1000;
          pacer.holdOff(provider, ctx.mode, ctx.accountRef, ms, 'lookup');
        }
      }
    };
    let got = await read(null);
    // The App Store answers per environment: a sandbox purchase is found with the test credential.
    if (!got.ok && got.refusal.error === 'purchase_not_found' && provider === 'store_ios') got = await read('test');
    if (!got.ok) return refuse(lineRefusal(got.refusal));
    const appUserId = row.app_user_id!;
    const refusal = registrationRefusal(
      got.read,
      got.read.is_sandbox ? 'test' : 'live',
      storeUserFor(provider, appUserId),
    );
    if (refusal) return refuse(lineRefusal(refusal));
    const storeRead = got.read;
    const key = { tenantId, provider, tokenHash: tokenHashOfKey(provider, storeRead.purchase_key) };
    const kept =
      provider === 'store_android' && row.sealed
        ? keepableSealed(vault, { tenantId, provider, purchaseKey: storeRead.purchase_key, sealed: row.sealed })
        : null;
    const written = await inSpan('entitlement.write', { 'billing.provider': provider }, () =>
      withTenant(db, tenantId, async (trx) => {
        // Claimed for the file's app user like a registration: the first to register a purchase owns it.
        const owner = await claimStorePurchaseToken(trx, key, appUserId, kept);
        if (owner !== appUserId) {
          await recordOutcome(
            trx,
            importId,
            row.line,
            'refused',
            'This purchase is already registered to another app user.',
          );
          return null;
        }
        const w = await writeStoreRead(trx, {
          tenantId,
          provider,
          read: storeRead,
          owner,
          hint: null,
          eventIds: [],
          quiet: true,
        });
        await recordOutcome(trx, importId, row.line, 'imported', null);
        return w;
      }),
    );
    // Counted once committed, as the store write counts its own.
    if (written?.state && written.app_user_id) entitlementWrites.inc({ provider, state: written.state });
  }
}

interface ProviderPageInput {
  tenantId: string;
  importId: string;
  provider: WebProviderId;
  connectionId: string;
  mode: Mode;
  cursor: string | null;
  listed: number;
}

interface FilePageInput {
  tenantId: string;
  importId: string;
  connections: Partial<Record<ProviderId, string>>;
  afterLine: number;
}
