import crypto from 'node:crypto';
import type Koa from 'koa';
import type { EmulatorStore } from '../common/types';
import type { Mode } from './accounts';
import type { Caller } from './auth';
import {
  ConnectError,
  entityError,
  enumAttr,
  includes,
  notFound,
  originOf,
  page,
  paramError,
  readJson,
  requestData,
  requiredString,
  single,
  toMany,
  toOne,
  type Resource,
} from './http';
import { decodePricePoint, pricePointsFor, type PricePoint } from './price-points';
import { currencyOf } from './territories';

/**
 * The App Store Connect API subset our adapter uses: apps, subscription groups,
 * subscriptions, price points, prices, availability and promotional offers, in JSON:API
 * shapes with cursor pagination (links.next), sparse fieldsets and include. Catalogue
 * objects record the account and mode (key) that created them; the other mode never sees them.
 */

const PERIODS = ['ONE_WEEK', 'ONE_MONTH', 'TWO_MONTHS', 'THREE_MONTHS', 'SIX_MONTHS', 'ONE_YEAR'] as const;
const OFFER_DURATIONS = [
  'THREE_DAYS',
  'ONE_WEEK',
  'TWO_WEEKS',
  'ONE_MONTH',
  'TWO_MONTHS',
  'THREE_MONTHS',
  'SIX_MONTHS',
  'ONE_YEAR',
] as const;
const OFFER_MODES = ['PAY_AS_YOU_GO', 'PAY_UP_FRONT', 'FREE_TRIAL'] as const;

interface Owned extends Record<string, unknown> {
  id: string;
  account: string;
  mode: Mode;
}
export interface Group extends Owned {
  app_id: string;
  referenceName: string;
}
export interface Subscription extends Owned {
  app_id: string;
  group_id: string;
  name: string;
  productId: string;
  familySharable: boolean;
  subscriptionPeriod: string | null;
  reviewNote: string | null;
  groupLevel: number;
  state: string;
}
interface Price extends Owned {
  subscription_id: string;
  territory: string;
  price_point_id: string;
  startDate: string | null;
  preserved: boolean;
}
interface Availability extends Owned {
  subscription_id: string;
  availableInNewTerritories: boolean;
  territories: string[];
}
interface Offer extends Owned {
  subscription_id: string;
  name: string;
  offerCode: string;
  duration: string;
  offerMode: string;
  numberOfPeriods: number;
  prices: { id: string; territory: string; price_point_id: string }[];
}

type Ctx = Koa.Context;
interface Route {
  method: string;
  path: RegExp;
  handler: (ctx: Ctx, caller: Caller, params: string[]) => Promise<void> | void;
}

function newId(store: EmulatorStore, kind: string): string {
  for (;;) {
    const id = String(6_400_000_000 + crypto.randomInt(0, 99_999_999));
    if (!store.find(kind, (o) => o.id === id)) return id;
  }
}

const owned = <T extends Owned>(store: EmulatorStore, kind: string, caller: Caller) =>
  (store.list(kind) as T[]).filter((o) => o.account === caller.account.account && o.mode === caller.mode);

function mustFind<T extends Owned>(store: EmulatorStore, kind: string, type: string, caller: Caller, id: string): T {
  const hit = owned<T>(store, kind, caller).find((o) => o.id === id);
  if (!hit) throw notFound(type, id);
  return hit;
}

function csv(ctx: Ctx, name: string): string[] | undefined {
  const v = new URLSearchParams(ctx.querystring).get(name);
  return v ? v.split(',').filter(Boolean) : undefined;
}

// ------------------------------------------------------------------ resources

const link = (ctx: Ctx, path: string) => `${originOf(ctx)}/v1/${path}`;
const relLinks = (ctx: Ctx, type: string, id: string, rel: string) => ({
  links: { self: link(ctx, `${type}/${id}/relationships/${rel}`), related: link(ctx, `${type}/${id}/${rel}`) },
});

function appResource(ctx: Ctx, caller: Caller): Resource {
  const a = caller.account;
  return {
    type: 'apps',
    id: a.app_id,
    attributes: {
      name: a.name,
      bundleId: a.bundle_id,
      sku: a.bundle_id.toUpperCase().replace(/\W/g, '_'),
      primaryLocale: 'en-US',
    },
    relationships: { subscriptionGroups: relLinks(ctx, 'apps', a.app_id, 'subscriptionGroups') },
    links: { self: link(ctx, `apps/${a.app_id}`) },
  };
}

function groupResource(ctx: Ctx, g: Group): Resource {
  return {
    type: 'subscriptionGroups',
    id: g.id,
    attributes: { referenceName: g.referenceName },
    relationships: {
      subscriptions: relLinks(ctx, 'subscriptionGroups', g.id, 'subscriptions'),
      subscriptionGroupLocalizations: relLinks(ctx, 'subscriptionGroups', g.id, 'subscriptionGroupLocalizations'),
    },
    links: { self: link(ctx, `subscriptionGroups/${g.id}`) },
  };
}

function subscriptionResource(ctx: Ctx, s: Subscription): Resource {
  return {
    type: 'subscriptions',
    id: s.id,
    attributes: {
      name: s.name,
      productId: s.productId,
      familySharable: s.familySharable,
      state: s.state,
      subscriptionPeriod: s.subscriptionPeriod,
      reviewNote: s.reviewNote,
      groupLevel: s.groupLevel,
    },
    relationships: {
      group: { data: { type: 'subscriptionGroups', id: s.group_id } },
      prices: relLinks(ctx, 'subscriptions', s.id, 'prices'),
      pricePoints: relLinks(ctx, 'subscriptions', s.id, 'pricePoints'),
      promotionalOffers: relLinks(ctx, 'subscriptions', s.id, 'promotionalOffers'),
      subscriptionAvailability: relLinks(ctx, 'subscriptions', s.id, 'subscriptionAvailability'),
    },
    links: { self: link(ctx, `subscriptions/${s.id}`) },
  };
}

function territoryResource(ctx: Ctx, id: string): Resource {
  return {
    type: 'territories',
    id,
    attributes: { currency: currencyOf(id) },
    links: { self: link(ctx, `territories/${id}`) },
  };
}

function pricePointResource(ctx: Ctx, p: PricePoint): Resource {
  return {
    type: 'subscriptionPricePoints',
    id: p.id,
    attributes: { customerPrice: p.customerPrice, proceeds: p.proceeds, proceedsYear2: p.proceeds },
    relationships: { territory: { data: { type: 'territories', id: p.territory } } },
    links: { self: link(ctx, `subscriptionPricePoints/${p.id}`) },
  };
}

function priceResource(ctx: Ctx, p: Price): Resource {
  return {
    type: 'subscriptionPrices',
    id: p.id,
    attributes: { startDate: p.startDate, preserved: p.preserved },
    relationships: {
      territory: { data: { type: 'territories', id: p.territory } },
      subscriptionPricePoint: { data: { type: 'subscriptionPricePoints', id: p.price_point_id } },
    },
    links: { self: link(ctx, `subscriptionPrices/${p.id}`) },
  };
}

function availabilityResource(ctx: Ctx, a: Availability): Resource {
  return {
    type: 'subscriptionAvailabilities',
    id: a.id,
    attributes: { availableInNewTerritories: a.availableInNewTerritories },
    relationships: {
      availableTerritories: {
        ...relLinks(ctx, 'subscriptionAvailabilities', a.id, 'availableTerritories'),
        data: a.territories.map((id) => ({ type: 'territories', id })),
      },
    },
    links: { self: link(ctx, `subscriptionAvailabilities/${a.id}`) },
  };
}

function offerResource(ctx: Ctx, o: Offer): Resource {
  return {
    type: 'subscriptionPromotionalOffers',
    id: o.id,
    attributes: {
      name: o.name,
      offerCode: o.offerCode,
      duration: o.duration,
      offerMode: o.offerMode,
      numberOfPeriods: o.numberOfPeriods,
    },
    relationships: {
      subscription: { data: { type: 'subscriptions', id: o.subscription_id } },
      prices: {
        ...relLinks(ctx, 'subscriptionPromotionalOffers', o.id, 'prices'),
        data: o.prices.map((p) => ({ type: 'subscriptionPromotionalOfferPrices', id: p.id })),
      },
    },
    links: { self: link(ctx, `subscriptionPromotionalOffers/${o.id}`) },
  };
}

// ------------------------------------------------------------------ state rules

/** On sale once it has a price and territories; an empty territory list is "removed from sale". */
function refreshState(store: EmulatorStore, sub: Subscription): void {
  const availability = (store.list('subscription_availabilities') as Availability[]).find(
    (a) => a.subscription_id === sub.id,
  );
  const priced = store.list('subscription_prices').some((p) => p.subscription_id === sub.id);
  if (availability && availability.territories.length === 0) sub.state = 'DEVELOPER_REMOVED_FROM_SALE';
  else if (availability && priced) sub.state = 'READY_TO_SUBMIT';
  else sub.state = 'MISSING_METADATA';
}

function subscriptionPointOrError(subId: string, pointId: string, pointer: string): PricePoint {
  const point = decodePricePoint(pointId);
  if (!point || point.subscriptionId !== subId) {
    throw entityError(
      'RELATIONSHIP.INVALID',
      `The price point '${pointId}' does not belong to subscription '${subId}'`,
      pointer,
    );
  }
  return point;
}

// ------------------------------------------------------------------ routes

export function connectRoutes(store: EmulatorStore): Route[] {
  const appOf = (caller: Caller, id: string) => {
    if (id !== caller.account.app_id) throw notFound('apps', id);
  };
  const today = () => new Date().toISOString().slice(0, 10);

  return [
    {
      method: 'GET',
      path: /^\/v1\/apps$/,
      handler(ctx, caller) {
        const bundles = csv(ctx, 'filter[bundleId]');
        const apps = !bundles || bundles.includes(caller.account.bundle_id) ? [caller] : [];
        ctx.body = page(ctx, apps, (c) => appResource(ctx, c), { max: 200 });
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/apps\/([^/]+)\/subscriptionGroups$/,
      handler(ctx, caller, [appId]) {
        appOf(caller, appId);
        const names = csv(ctx, 'filter[referenceName]');
        const groups = owned<Group>(store, 'subscription_groups', caller).filter(
          (g) => g.app_id === appId && (!names || names.includes(g.referenceName)),
        );
        ctx.body = page(ctx, groups, (g) => groupResource(ctx, g), { max: 200 });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/subscriptionGroups$/,
      async handler(ctx, caller) {
        const { attributes, relationships } = requestData(await readJson(ctx.req), 'subscriptionGroups');
        const referenceName = requiredString(attributes, 'referenceName');
        const appId = toOne(relationships, 'app', 'apps')!;
        appOf(caller, appId);
        if (
          owned<Group>(store, 'subscription_groups', caller).some(
            (g) => g.app_id === appId && g.referenceName === referenceName,
          )
        ) {
          throw entityError(
            'ATTRIBUTE.INVALID.DUPLICATE',
            `The reference name '${referenceName}' is already used by another subscription group`,
            '/data/attributes/referenceName',
          );
        }
        const g = store.insert<Group>('subscription_groups', {
          id: newId(store, 'subscription_groups'),
          account: caller.account.account,
          mode: caller.mode,
          app_id: appId,
          referenceName,
        });
        ctx.status = 201;
        ctx.body = single(ctx, groupResource(ctx, g));
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/subscriptionGroups\/([^/]+)\/subscriptions$/,
      handler(ctx, caller, [groupId]) {
        mustFind<Group>(store, 'subscription_groups', 'subscriptionGroups', caller, groupId);
        const productIds = csv(ctx, 'filter[productId]');
        const states = csv(ctx, 'filter[state]');
        const subs = owned<Subscription>(store, 'subscriptions', caller).filter(
          (s) =>
            s.group_id === groupId &&
            (!productIds || productIds.includes(s.productId)) &&
            (!states || states.includes(s.state)),
        );
        ctx.body = page(ctx, subs, (s) => subscriptionResource(ctx, s), { max: 200 });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/subscriptions$/,
      async handler(ctx, caller) {
        const { attributes, relationships } = requestData(await readJson(ctx.req), 'subscriptions');
        const name = requiredString(attributes, 'name');
        const productId = requiredString(attributes, 'productId');
        const subscriptionPeriod = enumAttr(attributes, 'subscriptionPeriod', PERIODS) ?? null;
        const groupId = toOne(relationships, 'group', 'subscriptionGroups')!;
        const group = mustFind<Group>(store, 'subscription_groups', 'subscriptionGroups', caller, groupId);
        // productId is unique across the app (all groups), which is what lets a retried create be detected.
        if (
          owned<Subscription>(store, 'subscriptions', caller).some(
            (s) => s.app_id === group.app_id && s.productId === productId,
          )
        ) {
          throw entityError(
            'ATTRIBUTE.INVALID.DUPLICATE',
            `The product ID '${productId}' has already been used`,
            '/data/attributes/productId',
          );
        }
        const siblings = owned<Subscription>(store, 'subscriptions', caller).filter((s) => s.group_id === groupId);
        const sub = store.insert<Subscription>('subscriptions', {
          id: newId(store, 'subscriptions'),
          account: caller.account.account,
          mode: caller.mode,
          app_id: group.app_id,
          group_id: groupId,
          name,
          productId,
          familySharable: attributes.familySharable === true,
          subscriptionPeriod,
          reviewNote: typeof attributes.reviewNote === 'string' ? attributes.reviewNote : null,
          groupLevel: typeof attributes.groupLevel === 'number' ? attributes.groupLevel : siblings.length + 1,
          state: 'MISSING_METADATA',
        });
        ctx.status = 201;
        ctx.body = single(ctx, subscriptionResource(ctx, sub));
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/subscriptions\/([^/]+)$/,
      handler(ctx, caller, [id]) {
        ctx.body = single(
          ctx,
          subscriptionResource(ctx, mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, id)),
        );
      },
    },
    {
      method: 'PATCH',
      path: /^\/v1\/subscriptions\/([^/]+)$/,
      async handler(ctx, caller, [id]) {
        const sub = mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, id);
        const { attributes, id: bodyId } = requestData(await readJson(ctx.req), 'subscriptions');
        if (bodyId !== id)
          throw entityError(
            'ID.INVALID',
            `The provided entity id '${String(bodyId)}' does not match the id '${id}' in the URL`,
            '/data/id',
          );
        for (const key of Object.keys(attributes)) {
          if (!['name', 'familySharable', 'subscriptionPeriod', 'reviewNote', 'groupLevel'].includes(key)) {
            throw entityError(
              'ATTRIBUTE.UNKNOWN',
              `The attribute '${key}' can not be included in a 'UPDATE' request`,
              `/data/attributes/${key}`,
            );
          }
        }
        if (attributes.name !== undefined) sub.name = requiredString(attributes, 'name');
        if (attributes.subscriptionPeriod !== undefined)
          sub.subscriptionPeriod = enumAttr(attributes, 'subscriptionPeriod', PERIODS) ?? sub.subscriptionPeriod;
        if (typeof attributes.reviewNote === 'string') sub.reviewNote = attributes.reviewNote;
        if (typeof attributes.familySharable === 'boolean') sub.familySharable = attributes.familySharable;
        if (typeof attributes.groupLevel === 'number') sub.groupLevel = attributes.groupLevel;
        store.save();
        ctx.body = single(ctx, subscriptionResource(ctx, sub));
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/subscriptions\/([^/]+)\/pricePoints$/,
      handler(ctx, caller, [id]) {
        mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, id);
        const territories = csv(ctx, 'filter[territory]');
        for (const t of territories ?? [])
          if (!currencyOf(t)) throw paramError('filter[territory]', `'${t}' is not a valid territory id`);
        const all = (territories ?? ['USA']).flatMap((t) => pricePointsFor(id, t));
        ctx.body = page(ctx, all, (p) => pricePointResource(ctx, p), {
          max: 8000,
          included: includes(ctx, 'territory')
            ? (items) => items.map((p) => territoryResource(ctx, p.territory))
            : undefined,
        });
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/subscriptions\/([^/]+)\/prices$/,
      handler(ctx, caller, [id]) {
        mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, id);
        const territories = csv(ctx, 'filter[territory]');
        const prices = owned<Price>(store, 'subscription_prices', caller).filter(
          (p) => p.subscription_id === id && (!territories || territories.includes(p.territory)),
        );
        ctx.body = page(ctx, prices, (p) => priceResource(ctx, p), {
          max: 200,
          included: (items) => [
            ...(includes(ctx, 'territory') ? items.map((p) => territoryResource(ctx, p.territory)) : []),
            ...(includes(ctx, 'subscriptionPricePoint')
              ? items.map((p) => pricePointResource(ctx, decodePricePoint(p.price_point_id)!))
              : []),
          ],
        });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/subscriptionPrices$/,
      async handler(ctx, caller) {
        const { attributes, relationships } = requestData(await readJson(ctx.req), 'subscriptionPrices');
        const subId = toOne(relationships, 'subscription', 'subscriptions')!;
        const sub = mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, subId);
        const point = subscriptionPointOrError(
          subId,
          toOne(relationships, 'subscriptionPricePoint', 'subscriptionPricePoints')!,
          '/data/relationships/subscriptionPricePoint',
        );
        const territory = toOne(relationships, 'territory', 'territories', false) ?? point.territory;
        if (territory !== point.territory)
          throw entityError(
            'RELATIONSHIP.INVALID',
            `The price point is for '${point.territory}', not '${territory}'`,
            '/data/relationships/territory',
          );
        const startDate = attributes.startDate ?? null;
        if (startDate !== null && (typeof startDate !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(startDate))) {
          throw entityError(
            'ATTRIBUTE.INVALID',
            "'startDate' must be a date (YYYY-MM-DD)",
            '/data/attributes/startDate',
          );
        }
        const mine = owned<Price>(store, 'subscription_prices', caller).filter(
          (p) => p.subscription_id === subId && p.territory === territory,
        );
        // The first price has no start date; a change without one starts today. One price per territory and start date.
        const effective = (startDate as string | null) ?? (mine.length ? today() : null);
        const same = mine.find((p) => p.startDate === effective);
        const price =
          same ??
          store.insert<Price>('subscription_prices', {
            id: crypto.randomBytes(12).toString('base64url'),
            account: caller.account.account,
            mode: caller.mode,
            subscription_id: subId,
            territory,
            price_point_id: point.id,
            startDate: effective,
            preserved: false,
          });
        price.price_point_id = point.id;
        price.preserved = attributes.preserveCurrentPrice === true;
        refreshState(store, sub);
        store.save();
        ctx.status = 201;
        ctx.body = single(ctx, priceResource(ctx, price));
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/subscriptionAvailabilities$/,
      async handler(ctx, caller) {
        const { attributes, relationships } = requestData(await readJson(ctx.req), 'subscriptionAvailabilities');
        if (typeof attributes.availableInNewTerritories !== 'boolean') {
          throw entityError(
            'ATTRIBUTE.REQUIRED',
            "You must provide a value for the attribute 'availableInNewTerritories' with this request",
            '/data/attributes/availableInNewTerritories',
          );
        }
        const subId = toOne(relationships, 'subscription', 'subscriptions')!;
        const sub = mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, subId);
        const territories = toMany(relationships, 'availableTerritories', 'territories');
        territories.forEach((t, i) => {
          if (!currencyOf(t))
            throw entityError(
              'RELATIONSHIP.INVALID',
              `'${t}' is not a valid territory id`,
              `/data/relationships/availableTerritories/data/${i}`,
            );
        });
        // "Modify the territory availability": one availability per subscription, replaced by each POST.
        const list = store.list('subscription_availabilities') as Availability[];
        let a = list.find((x) => x.subscription_id === subId);
        if (!a)
          a = store.insert<Availability>('subscription_availabilities', {
            id: subId,
            account: caller.account.account,
            mode: caller.mode,
            subscription_id: subId,
            availableInNewTerritories: false,
            territories: [],
          });
        a.availableInNewTerritories = attributes.availableInNewTerritories;
        a.territories = [...new Set(territories)];
        refreshState(store, sub);
        store.save();
        ctx.status = 201;
        ctx.body = single(ctx, availabilityResource(ctx, a));
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/subscriptions\/([^/]+)\/subscriptionAvailability$/,
      handler(ctx, caller, [id]) {
        mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, id);
        const a = (store.list('subscription_availabilities') as Availability[]).find((x) => x.subscription_id === id);
        if (!a) throw notFound('subscriptionAvailabilities', id);
        ctx.body = single(
          ctx,
          availabilityResource(ctx, a),
          includes(ctx, 'availableTerritories') ? a.territories.map((t) => territoryResource(ctx, t)) : undefined,
        );
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/subscriptions\/([^/]+)\/promotionalOffers$/,
      handler(ctx, caller, [id]) {
        mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, id);
        const offers = owned<Offer>(store, 'promotional_offers', caller).filter((o) => o.subscription_id === id);
        ctx.body = page(ctx, offers, (o) => offerResource(ctx, o), { max: 200 });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/subscriptionPromotionalOffers$/,
      async handler(ctx, caller) {
        const { attributes, relationships, included } = requestData(
          await readJson(ctx.req),
          'subscriptionPromotionalOffers',
        );
        const name = requiredString(attributes, 'name');
        const offerCode = requiredString(attributes, 'offerCode');
        const duration = enumAttr(attributes, 'duration', OFFER_DURATIONS, true)!;
        const offerMode = enumAttr(attributes, 'offerMode', OFFER_MODES, true)!;
        const numberOfPeriods = attributes.numberOfPeriods;
        if (
          typeof numberOfPeriods !== 'number' ||
          !Number.isInteger(numberOfPeriods) ||
          numberOfPeriods < 1 ||
          numberOfPeriods > (offerMode === 'PAY_AS_YOU_GO' ? 12 : 1)
        ) {
          throw entityError(
            'ATTRIBUTE.INVALID',
            `'numberOfPeriods' must be 1${offerMode === 'PAY_AS_YOU_GO' ? '–12' : ''} for ${offerMode}`,
            '/data/attributes/numberOfPeriods',
          );
        }
        const subId = toOne(relationships, 'subscription', 'subscriptions')!;
        const sub = mustFind<Subscription>(store, 'subscriptions', 'subscriptions', caller, subId);
        if (offerMode === 'PAY_AS_YOU_GO' && sub.subscriptionPeriod && duration !== sub.subscriptionPeriod) {
          throw entityError(
            'ATTRIBUTE.INVALID',
            `A pay-as-you-go offer's duration must equal the subscription period ${sub.subscriptionPeriod}`,
            '/data/attributes/duration',
          );
        }
        if (
          owned<Offer>(store, 'promotional_offers', caller).some(
            (o) => o.subscription_id === subId && o.offerCode === offerCode,
          )
        ) {
          throw entityError(
            'ATTRIBUTE.INVALID.DUPLICATE',
            `The offer code '${offerCode}' is already used by this subscription`,
            '/data/attributes/offerCode',
          );
        }
        const priceRefs = toMany(relationships, 'prices', 'subscriptionPromotionalOfferPrices');
        const prices = priceRefs.map((ref, i) => {
          const inc = included.find((x) => x.type === 'subscriptionPromotionalOfferPrices' && x.id === ref);
          if (!inc)
            throw entityError(
              'RELATIONSHIP.INVALID',
              `The relationship 'prices' expects an included resource with id '${ref}' but no matching resource was included`,
              '/included',
            );
          const rels = (inc.relationships ?? {}) as Record<string, unknown>;
          const point = subscriptionPointOrError(
            subId,
            toOne(rels, 'subscriptionPricePoint', 'subscriptionPricePoints')!,
            `/included/${i}/relationships/subscriptionPricePoint`,
          );
          const territory = toOne(rels, 'territory', 'territories', false) ?? point.territory;
          if (territory !== point.territory)
            throw entityError(
              'RELATIONSHIP.INVALID',
              `The price point is for '${point.territory}', not '${territory}'`,
              `/included/${i}/relationships/territory`,
            );
          return { id: crypto.randomBytes(9).toString('base64url'), territory, price_point_id: point.id };
        });
        if (prices.length === 0)
          throw entityError(
            'RELATIONSHIP.REQUIRED',
            'A promotional offer needs a price in at least one territory',
            '/data/relationships/prices',
          );
        const offer = store.insert<Offer>('promotional_offers', {
          id: newId(store, 'promotional_offers'),
          account: caller.account.account,
          mode: caller.mode,
          subscription_id: subId,
          name,
          offerCode,
          duration,
          offerMode,
          numberOfPeriods,
          prices,
        });
        ctx.status = 201;
        ctx.body = single(ctx, offerResource(ctx, offer));
      },
    },
  ];
}

export async function handleConnect(routes: Route[], ctx: Ctx, caller: Caller): Promise<boolean> {
  for (const r of routes) {
    if (r.method !== ctx.method) continue;
    const m = r.path.exec(ctx.path);
    if (!m) continue;
    await r.handler(ctx, caller, m.slice(1).map(decodeURIComponent));
    return true;
  }
  if (/^\/v1\//.test(ctx.path)) {
    throw new ConnectError(
      404,
      'NOT_FOUND',
      'The specified resource does not exist',
      `The path provided does not match a defined resource type: ${ctx.method} ${ctx.path}`,
    );
  }
  return false;
}

/** The subscription a productId names in an account and mode (for purchase prices and periods). */
export function subscriptionByProductId(
  store: EmulatorStore,
  account: string,
  mode: Mode,
  productId: string,
): Subscription | undefined {
  return (store.list('subscriptions') as Subscription[]).find(
    (s) => s.account === account && s.mode === mode && s.productId === productId,
  );
}

/** Today's price of a subscription in a territory, in minor units, if priced. */
export function subscriptionPriceIn(
  store: EmulatorStore,
  sub: Subscription,
  territory: string,
): PricePoint | undefined {
  const prices = (store.list('subscription_prices') as Price[]).filter(
    (p) => p.subscription_id === sub.id && p.territory === territory,
  );
  const today = new Date().toISOString().slice(0, 10);
  const current = prices
    .filter((p) => (p.startDate ?? '') <= today)
    .sort((a, b) => (a.startDate ?? '').localeCompare(b.startDate ?? ''))
    .pop();
  return current ? decodePricePoint(current.price_point_id) : undefined;
}
