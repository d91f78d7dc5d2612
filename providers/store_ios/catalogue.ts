import { ProviderRejectedError } from '../errors';
import type { PaymentLinkResult, ProductSpec, RemoteProduct, Tier } from '../types';
import { attr, one, type ConnectClient, type JsonApiResource } from './connect';
import { PROVIDER } from './errors';

const PERIOD: Record<Tier, string> = {
  weekly: 'ONE_WEEK',
  monthly: 'ONE_MONTH',
  quarterly: 'THREE_MONTHS',
  annual: 'ONE_YEAR',
};

/** States in which a subscription is not on sale (App Store Connect `Subscription.state`). */
const OFF_SALE = new Set(['DEVELOPER_REMOVED_FROM_SALE', 'REMOVED_FROM_SALE', 'REJECTED']);

export function subscriptionPeriod(spec: ProductSpec): string {
  if (!spec.tier)
    throw new ProviderRejectedError(
      PROVIDER,
      `product ${spec.sku} has no billing tier; App Store subscriptions need a period`,
    );
  return PERIOD[spec.tier];
}

export function storeProductId(spec: ProductSpec): string {
  return spec.ios_store_product_id?.trim() || spec.sku;
}

/**
 * App Store Connect has no metadata field, so the review note (seen only by App Review)
 * carries our product id; drift reads it back to match objects whose productId changed.
 */
export function reviewNote(spec: ProductSpec): string {
  return `Managed by the billing service. sku=${spec.sku} product_id=${spec.product_id}`;
}

const PRODUCT_ID_IN_NOTE = /product_id=([0-9a-fA-F-]{36})/;

export async function findAppId(c: ConnectClient, bundleId: string): Promise<string> {
  const doc = await c.get('/v1/apps', { 'filter[bundleId]': bundleId, limit: 200 });
  const apps = Array.isArray(doc.data) ? doc.data : [];
  const app = apps.find((a) => attr(a, 'bundleId') === bundleId);
  if (!app)
    throw new ProviderRejectedError(
      PROVIDER,
      `no app with bundle id ${bundleId} is visible to this App Store Connect key`,
      { code: 'APP_NOT_FOUND' },
    );
  return app.id;
}

export async function listGroups(c: ConnectClient, appId: string, pageSize: number): Promise<JsonApiResource[]> {
  return (await c.list(`/v1/apps/${appId}/subscriptionGroups`, { limit: pageSize })).data;
}

export async function listRemoteProducts(
  c: ConnectClient,
  bundleId: string,
  pageSize: number,
): Promise<RemoteProduct[]> {
  const appId = await findAppId(c, bundleId);
  const out: RemoteProduct[] = [];
  for (const group of await listGroups(c, appId, pageSize)) {
    const subs = await c.list(`/v1/subscriptionGroups/${group.id}/subscriptions`, { limit: pageSize });
    for (const s of subs.data) {
      const note = attr(s, 'reviewNote') ?? '';
      out.push({
        external_id: s.id,
        sku: attr(s, 'productId') ?? null,
        name: attr(s, 'name') ?? '',
        active: !OFF_SALE.has(attr(s, 'state') ?? ''),
        product_id: PRODUCT_ID_IN_NOTE.exec(note)?.[1] ?? null,
      });
    }
  }
  return out;
}

async function findSubscription(
  c: ConnectClient,
  groups: JsonApiResource[],
  productId: string,
  pageSize: number,
): Promise<JsonApiResource | undefined> {
  for (const g of groups) {
    const r = await c.list(`/v1/subscriptionGroups/${g.id}/subscriptions`, {
      'filter[productId]': productId,
      limit: pageSize,
    });
    const hit = r.data.find((s) => attr(s, 'productId') === productId);
    if (hit) return hit;
  }
  return undefined;
}

async function ensureGroup(
  c: ConnectClient,
  appId: string,
  groups: JsonApiResource[],
  referenceName: string,
  pageSize: number,
): Promise<string> {
  const existing = groups.find((g) => attr(g, 'referenceName') === referenceName);
  if (existing) return existing.id;
  try {
    const doc = await c.post('/v1/subscriptionGroups', {
      data: {
        type: 'subscriptionGroups',
        attributes: { referenceName },
        relationships: { app: { data: { type: 'apps', id: appId } } },
      },
    });
    return one(doc).id;
  } catch (err) {
    // A retried create whose first attempt landed: the name is now taken, so read it back.
    if ((err as { status?: number }).status !== 409) throw err;
    const again = (await listGroups(c, appId, pageSize)).find((g) => attr(g, 'referenceName') === referenceName);
    if (!again) throw err;
    return again.id;
  }
}

/**
 * Find the subscription by its productId across the app's groups (Apple has no idempotency
 * header; productId is unique per app, so it is the match key), update it when it differs,
 * else create it in our group.
 */
export async function upsertSubscription(
  c: ConnectClient,
  bundleId: string,
  spec: ProductSpec,
  opts: { groupName: string; pageSize: number },
): Promise<{ external_id: string }> {
  const productId = storeProductId(spec);
  const period = subscriptionPeriod(spec);
  const appId = await findAppId(c, bundleId);
  const groups = await listGroups(c, appId, opts.pageSize);
  const wanted = { name: spec.name, subscriptionPeriod: period, reviewNote: reviewNote(spec) };

  const existing = await findSubscription(c, groups, productId, opts.pageSize);
  if (existing) {
    const changed = Object.entries(wanted).some(([k, v]) => attr(existing, k) !== v);
    if (changed)
      await c.patch(`/v1/subscriptions/${existing.id}`, {
        data: { type: 'subscriptions', id: existing.id, attributes: wanted },
      });
    return { external_id: existing.id };
  }

  const groupId = await ensureGroup(c, appId, groups, opts.groupName, opts.pageSize);
  try {
    const doc = await c.post('/v1/subscriptions', {
      data: {
        type: 'subscriptions',
        attributes: { productId, familySharable: false, ...wanted },
        relationships: { group: { data: { type: 'subscriptionGroups', id: groupId } } },
      },
    });
    return { external_id: one(doc).id };
  } catch (err) {
    if ((err as { status?: number }).status !== 409) throw err;
    const again = await findSubscription(c, await listGroups(c, appId, opts.pageSize), productId, opts.pageSize);
    if (!again) throw err;
    return { external_id: again.id };
  }
}

export async function subscriptionById(c: ConnectClient, id: string): Promise<JsonApiResource> {
  return one(await c.get(`/v1/subscriptions/${encodeURIComponent(id)}`));
}

/** Stores have no payment links: the app buys the subscription by its productId. */
export async function planFor(c: ConnectClient, externalProductId: string): Promise<PaymentLinkResult> {
  const sub = await subscriptionById(c, externalProductId);
  const productId = attr(sub, 'productId');
  if (!productId) throw new ProviderRejectedError(PROVIDER, `subscription ${externalProductId} has no productId`);
  return { kind: 'plan', external_id: productId };
}

/** Territory availability of a subscription; an empty list removes it from sale everywhere. */
export async function setAvailability(c: ConnectClient, subscriptionId: string, territories: string[]): Promise<void> {
  await c.post('/v1/subscriptionAvailabilities', {
    data: {
      type: 'subscriptionAvailabilities',
      attributes: { availableInNewTerritories: false },
      relationships: {
        subscription: { data: { type: 'subscriptions', id: subscriptionId } },
        availableTerritories: { data: territories.map((id) => ({ type: 'territories', id })) },
      },
    },
  });
}
