import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import type { EmulatorStore } from '../common/types';
import type { Mode } from './accounts';
import { GoogleError, invalid, notFound, precondition } from './google-error';
import type { Caller } from './oauth';
import { PLAN_ID, PRODUCT_ID, requireRegionsVersion, validateOffer, validateSubscription } from './validate';

type Subscription = androidpublisher_v3.Schema$Subscription;
type BasePlan = androidpublisher_v3.Schema$BasePlan;
type Offer = androidpublisher_v3.Schema$SubscriptionOffer;

/** Stored rows: the Play resource plus who owns it and which credential mode created it. */
interface SubRow extends Record<string, unknown> {
  account: string;
  mode: Mode;
  productId: string;
  resource: Subscription;
}
interface OfferRow extends Record<string, unknown> {
  account: string;
  mode: Mode;
  productId: string;
  basePlanId: string;
  offerId: string;
  resource: Offer;
}

type Query = Record<string, string | string[] | undefined>;
const q = (query: Query, name: string) => {
  const v = query[name];
  return Array.isArray(v) ? v[0] : v;
};

const UPDATABLE = ['listings', 'basePlans', 'taxAndComplianceSettings', 'restrictedPaymentCountries'] as const;
const clone = <T>(v: T): T => structuredClone(v);

function page<T>(rows: T[], query: Query, max: number): { items: T[]; next?: string } {
  const size = Math.min(Math.max(Number(q(query, 'pageSize')) || 50, 1), max);
  let offset = 0;
  const token = q(query, 'pageToken');
  if (token) {
    const m = Buffer.from(token, 'base64url')
      .toString('utf8')
      .match(/^offset:(\d+)$/);
    if (!m) throw invalid('Page token is not valid.');
    offset = Number(m[1]);
  }
  const items = rows.slice(offset, offset + size);
  return {
    items,
    next: offset + size < rows.length ? Buffer.from(`offset:${offset + size}`).toString('base64url') : undefined,
  };
}

/** monetization.subscriptions, .basePlans and .basePlans.offers, scoped to the caller's app and credential mode. */
export function catalog(store: EmulatorStore) {
  const subs = (c: Caller) =>
    (store.list('subscriptions') as SubRow[]).filter((r) => r.account === c.account.account && r.mode === c.mode);
  const sub = (c: Caller, productId: string) => subs(c).find((r) => r.productId === productId);
  const mustSub = (c: Caller, productId: string) => {
    const row = sub(c, productId);
    if (!row) throw notFound(`Subscription not found: ${productId}.`);
    return row;
  };
  const mustPlan = (row: SubRow, basePlanId: string) => {
    const bp = row.resource.basePlans?.find((b) => b.basePlanId === basePlanId);
    if (!bp) throw notFound(`Base plan not found: ${row.productId}/${basePlanId}.`);
    return bp;
  };
  const offers = (c: Caller, productId: string, basePlanId: string) =>
    (store.list('offers') as OfferRow[]).filter(
      (o) =>
        o.account === c.account.account &&
        o.mode === c.mode &&
        o.productId === productId &&
        o.basePlanId === basePlanId,
    );
  const mustOffer = (c: Caller, productId: string, basePlanId: string, offerId: string) => {
    const o = offers(c, productId, basePlanId).find((x) => x.offerId === offerId);
    if (!o) throw notFound(`Offer not found: ${productId}/${basePlanId}/${offerId}.`);
    return o;
  };

  function createSub(c: Caller, query: Query, body: Subscription): Subscription {
    const productId = q(query, 'productId');
    if (!productId) throw invalid('productId is required.');
    if (!PRODUCT_ID.test(productId)) {
      throw invalid(
        'Product ID must start with a number or lower-case letter, and can contain only lower-case letters, numbers, underscores and periods (at most 40 characters).',
      );
    }
    requireRegionsVersion(q(query, 'regionsVersion.version'));
    if (body.productId && body.productId !== productId)
      throw invalid('productId in the body must match the productId parameter.');
    if (body.packageName && body.packageName !== c.account.account)
      throw invalid('packageName in the body must match the request.');
    if (sub(c, productId)) throw new GoogleError(409, `Subscription ${productId} already exists.`);
    const resource: Subscription = {
      packageName: c.account.account,
      productId,
      listings: clone(body.listings ?? []),
      // State is output only: every new base plan starts as a draft.
      basePlans: (body.basePlans ?? []).map((bp) => ({ ...clone(bp), state: 'DRAFT' })),
      ...(body.taxAndComplianceSettings ? { taxAndComplianceSettings: clone(body.taxAndComplianceSettings) } : {}),
      ...(body.restrictedPaymentCountries
        ? { restrictedPaymentCountries: clone(body.restrictedPaymentCountries) }
        : {}),
    };
    validateSubscription(resource, c.account.default_language);
    store.insert('subscriptions', {
      account: c.account.account,
      mode: c.mode,
      productId,
      resource,
      created: new Date().toISOString(),
    } satisfies SubRow);
    return resource;
  }

  /** Base plans of an update: state carries over, periods are immutable, live plans cannot vanish. */
  function mergePlans(existing: BasePlan[], incoming: BasePlan[]): BasePlan[] {
    const byId = new Map(existing.map((b) => [b.basePlanId, b]));
    for (const old of existing) {
      if (old.state !== 'DRAFT' && !incoming.some((b) => b.basePlanId === old.basePlanId)) {
        throw precondition(`Base plan ${old.basePlanId} is ${old.state} and cannot be removed by an update.`);
      }
    }
    return incoming.map((bp) => {
      const old = byId.get(bp.basePlanId);
      if (old) {
        const before = old.autoRenewingBasePlanType?.billingPeriodDuration;
        const after = bp.autoRenewingBasePlanType?.billingPeriodDuration;
        if (before !== after) throw invalid(`Base plan ${bp.basePlanId}: billingPeriodDuration is immutable.`);
      }
      return { ...clone(bp), state: old?.state ?? 'DRAFT' };
    });
  }

  function patchSub(c: Caller, productId: string, query: Query, body: Subscription): Subscription {
    requireRegionsVersion(q(query, 'regionsVersion.version'));
    const row = sub(c, productId);
    if (!row) {
      if (q(query, 'allowMissing') === 'true') return createSub(c, { ...query, productId }, body);
      throw notFound(`Subscription not found: ${productId}.`);
    }
    if (body.productId && body.productId !== productId) throw invalid('productId is immutable.');
    const mask = (q(query, 'updateMask') ?? '')
      .split(',')
      .map((f) => f.trim().replace(/_([a-z])/g, (_m, ch: string) => ch.toUpperCase()))
      .filter(Boolean);
    if (mask.length === 0) throw invalid('updateMask is required.');
    const next: Subscription = clone(row.resource);
    for (const field of mask) {
      if (!(UPDATABLE as readonly string[]).includes(field)) throw invalid(`Field ${field} cannot be updated.`);
      if (field === 'basePlans') next.basePlans = mergePlans(row.resource.basePlans ?? [], body.basePlans ?? []);
      else (next as Record<string, unknown>)[field] = clone((body as Record<string, unknown>)[field]);
    }
    validateSubscription(next, c.account.default_language);
    row.resource = next;
    store.save();
    return next;
  }

  function setPlanState(c: Caller, productId: string, basePlanId: string, to: 'ACTIVE' | 'INACTIVE'): Subscription {
    const row = mustSub(c, productId);
    const bp = mustPlan(row, basePlanId);
    if (to === 'ACTIVE') {
      if (bp.state === 'ACTIVE') throw precondition(`Base plan ${basePlanId} is already active.`);
      const sellable = (bp.regionalConfigs ?? []).some((r) => r.newSubscriberAvailability && r.price);
      if (!sellable)
        throw precondition(
          `Base plan ${basePlanId} must be priced and available in at least one region before it can be activated.`,
        );
    } else if (bp.state !== 'ACTIVE') {
      throw precondition(`Base plan ${basePlanId} is not active.`);
    }
    bp.state = to;
    store.save();
    return row.resource;
  }

  function createOffer(c: Caller, productId: string, basePlanId: string, query: Query, body: Offer): Offer {
    const offerId = q(query, 'offerId');
    if (!offerId) throw invalid('offerId is required.');
    if (!PLAN_ID.test(offerId))
      throw invalid(
        'Offer ID must be at most 63 characters of lower-case letters, numbers and hyphens, starting with a letter or number.',
      );
    requireRegionsVersion(q(query, 'regionsVersion.version'));
    const row = mustSub(c, productId);
    const plan = mustPlan(row, basePlanId);
    if (offers(c, productId, basePlanId).some((o) => o.offerId === offerId))
      throw new GoogleError(409, `Offer ${offerId} already exists.`);
    const resource: Offer = {
      ...clone(body),
      packageName: c.account.account,
      productId,
      basePlanId,
      offerId,
      state: 'DRAFT',
    };
    validateOffer(resource, plan);
    store.insert('offers', {
      account: c.account.account,
      mode: c.mode,
      productId,
      basePlanId,
      offerId,
      resource,
    } satisfies OfferRow);
    return resource;
  }

  function setOfferState(
    c: Caller,
    productId: string,
    basePlanId: string,
    offerId: string,
    to: 'ACTIVE' | 'INACTIVE',
  ): Offer {
    mustPlan(mustSub(c, productId), basePlanId);
    const o = mustOffer(c, productId, basePlanId, offerId);
    if (to === 'ACTIVE' && o.resource.state === 'ACTIVE') throw precondition(`Offer ${offerId} is already active.`);
    if (to === 'INACTIVE' && o.resource.state !== 'ACTIVE') throw precondition(`Offer ${offerId} is not active.`);
    o.resource.state = to;
    store.save();
    return o.resource;
  }

  return {
    list(c: Caller, query: Query) {
      const { items, next } = page(subs(c), query, 1000);
      return { subscriptions: items.map((r) => r.resource), ...(next ? { nextPageToken: next } : {}) };
    },
    create: createSub,
    get: (c: Caller, productId: string) => mustSub(c, productId).resource,
    patch: patchSub,
    remove(c: Caller, productId: string) {
      const row = mustSub(c, productId);
      if ((row.resource.basePlans ?? []).some((b) => b.state !== 'DRAFT'))
        throw precondition('Only subscriptions whose base plans were never activated can be deleted.');
      const all = store.list('subscriptions');
      all.splice(all.indexOf(row), 1);
      store.save();
      return {};
    },
    activatePlan: (c: Caller, productId: string, basePlanId: string) =>
      setPlanState(c, productId, basePlanId, 'ACTIVE'),
    deactivatePlan: (c: Caller, productId: string, basePlanId: string) =>
      setPlanState(c, productId, basePlanId, 'INACTIVE'),
    listOffers(c: Caller, productId: string, basePlanId: string, query: Query) {
      mustPlan(mustSub(c, productId), basePlanId);
      const { items, next } = page(offers(c, productId, basePlanId), query, 1000);
      return { subscriptionOffers: items.map((o) => o.resource), ...(next ? { nextPageToken: next } : {}) };
    },
    createOffer,
    getOffer: (c: Caller, productId: string, basePlanId: string, offerId: string) =>
      mustOffer(c, productId, basePlanId, offerId).resource,
    activateOffer: (c: Caller, p: string, b: string, o: string) => setOfferState(c, p, b, o, 'ACTIVE'),
    deactivateOffer: (c: Caller, p: string, b: string, o: string) => setOfferState(c, p, b, o, 'INACTIVE'),
    /** For the sandbox purchase: the app's product in any mode, by product id or base plan id. */
    findForPurchase(account: string, id: string): { sub: Subscription; plan?: BasePlan } | undefined {
      const rows = (store.list('subscriptions') as SubRow[]).filter((r) => r.account === account);
      const ordered = [...rows.filter((r) => r.mode === 'test'), ...rows.filter((r) => r.mode === 'live')];
      const byProduct = ordered.find((r) => r.productId === id);
      if (byProduct) {
        const plans = byProduct.resource.basePlans ?? [];
        return { sub: byProduct.resource, plan: plans.find((b) => b.state === 'ACTIVE') ?? plans[0] };
      }
      for (const r of ordered) {
        const plan = r.resource.basePlans?.find((b) => b.basePlanId === id);
        if (plan) return { sub: r.resource, plan };
      }
      return undefined;
    },
  };
}

export type Catalog = ReturnType<typeof catalog>;
