import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { invalid } from './google-error';

type Subscription = androidpublisher_v3.Schema$Subscription;
type BasePlan = androidpublisher_v3.Schema$BasePlan;
type Money = androidpublisher_v3.Schema$Money;
type Offer = androidpublisher_v3.Schema$SubscriptionOffer;

export const PRODUCT_ID = /^[a-z0-9][a-z0-9_.]{0,39}$/;
/** RFC-1034 label: base plan and offer ids. */
export const PLAN_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Regions versions Play has published. */
export const REGIONS_VERSIONS = ['2022/01', '2022/02', '2025/03'];
/** Billing periods Play accepts for auto-renewing base plans. */
const PERIODS = ['P1W', 'P4W', 'P1M', 'P2M', 'P3M', 'P4M', 'P6M', 'P8M', 'P1Y'];
const ISO_DURATION = /^P(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?$/;

/**
 * The currency Play prices each region in (a subset; regions not listed accept any ISO code).
 * A price in another currency is refused, as Play refuses it.
 */
export const REGION_CURRENCY: Record<string, string> = {
  US: 'USD',
  CA: 'CAD',
  MX: 'MXN',
  BR: 'BRL',
  CL: 'CLP',
  CO: 'COP',
  PE: 'PEN',
  GB: 'GBP',
  IE: 'EUR',
  DE: 'EUR',
  FR: 'EUR',
  ES: 'EUR',
  IT: 'EUR',
  NL: 'EUR',
  BE: 'EUR',
  AT: 'EUR',
  PT: 'EUR',
  FI: 'EUR',
  GR: 'EUR',
  SK: 'EUR',
  SI: 'EUR',
  LT: 'EUR',
  LV: 'EUR',
  EE: 'EUR',
  LU: 'EUR',
  CH: 'CHF',
  SE: 'SEK',
  NO: 'NOK',
  DK: 'DKK',
  PL: 'PLN',
  CZ: 'CZK',
  HU: 'HUF',
  RO: 'RON',
  TR: 'TRY',
  IN: 'INR',
  JP: 'JPY',
  KR: 'KRW',
  ID: 'IDR',
  TH: 'THB',
  VN: 'VND',
  PH: 'PHP',
  SG: 'SGD',
  MY: 'MYR',
  HK: 'HKD',
  TW: 'TWD',
  AU: 'AUD',
  NZ: 'NZD',
  ZA: 'ZAR',
  NG: 'NGN',
  EG: 'EGP',
  SA: 'SAR',
  AE: 'AED',
  IL: 'ILS',
};

export function requireRegionsVersion(v: unknown): void {
  if (typeof v !== 'string' || !v) throw invalid('regionsVersion.version is required.');
  if (!REGIONS_VERSIONS.includes(v)) throw invalid(`Unsupported regions version: ${v}.`);
}

function money(m: Money | undefined, where: string, regionCode: string): void {
  if (!m || typeof m.currencyCode !== 'string' || !/^[A-Z]{3}$/.test(m.currencyCode))
    throw invalid(`${where}: price.currencyCode must be an ISO 4217 code.`);
  const want = REGION_CURRENCY[regionCode];
  if (want && m.currencyCode !== want)
    throw invalid(`${where}: price for region ${regionCode} must be in ${want}, got ${m.currencyCode}.`);
  if (m.units != null && !/^-?\d+$/.test(String(m.units))) throw invalid(`${where}: price.units must be an integer.`);
  if (m.nanos != null && (!Number.isInteger(m.nanos) || Math.abs(m.nanos) > 999_999_999))
    throw invalid(`${where}: price.nanos out of range.`);
  if (Number(m.units ?? 0) < 0 || (m.nanos ?? 0) < 0) throw invalid(`${where}: price must not be negative.`);
}

function basePlan(bp: BasePlan, i: number): void {
  const where = `basePlans[${i}]`;
  if (typeof bp.basePlanId !== 'string' || !PLAN_ID.test(bp.basePlanId)) {
    throw invalid(
      `${where}.basePlanId must be at most 63 characters of lower-case letters, numbers and hyphens, starting with a letter or number.`,
    );
  }
  const types = [bp.autoRenewingBasePlanType, bp.prepaidBasePlanType, bp.installmentsBasePlanType].filter(
    Boolean,
  ).length;
  if (types !== 1) throw invalid(`${where}: exactly one base plan type must be set.`);
  const period =
    bp.autoRenewingBasePlanType?.billingPeriodDuration ??
    bp.prepaidBasePlanType?.timeExtension ??
    bp.installmentsBasePlanType?.billingPeriodDuration;
  if (bp.autoRenewingBasePlanType && (!period || !PERIODS.includes(period)))
    throw invalid(`${where}: billingPeriodDuration must be one of ${PERIODS.join(', ')}.`);
  const seen = new Set<string>();
  (bp.regionalConfigs ?? []).forEach((rc, j) => {
    const w = `${where}.regionalConfigs[${j}]`;
    if (typeof rc.regionCode !== 'string' || !/^[A-Z]{2}$/.test(rc.regionCode))
      throw invalid(`${w}.regionCode must be an ISO 3166-1 alpha-2 code.`);
    if (seen.has(rc.regionCode)) throw invalid(`${where}: region ${rc.regionCode} is configured twice.`);
    seen.add(rc.regionCode);
    if (rc.newSubscriberAvailability && !rc.price)
      throw invalid(`${w}: a price is required where the base plan is available to new subscribers.`);
    if (rc.price) money(rc.price, w, rc.regionCode);
  });
}

/** What Play checks of a subscription body before storing it. */
export function validateSubscription(sub: Subscription, defaultLanguage: string): void {
  if (!Array.isArray(sub.listings) || sub.listings.length === 0)
    throw invalid('listings: at least one listing is required.');
  for (const [i, l] of sub.listings.entries()) {
    if (typeof l.languageCode !== 'string' || !l.languageCode)
      throw invalid(`listings[${i}].languageCode is required.`);
    if (typeof l.title !== 'string' || !l.title.trim()) throw invalid(`listings[${i}].title is required.`);
    if (l.title.length > 55) throw invalid(`listings[${i}].title must be at most 55 characters.`);
    if (l.description && l.description.length > 200)
      throw invalid(`listings[${i}].description must be at most 200 characters.`);
  }
  if (!sub.listings.some((l) => l.languageCode === defaultLanguage))
    throw invalid(`listings must include the app's default language (${defaultLanguage}).`);
  const ids = new Set<string>();
  (sub.basePlans ?? []).forEach((bp, i) => {
    basePlan(bp, i);
    if (ids.has(bp.basePlanId!)) throw invalid(`Duplicate base plan id ${bp.basePlanId}.`);
    ids.add(bp.basePlanId!);
  });
}

/** What Play checks of an offer against its base plan. */
export function validateOffer(offer: Offer, plan: BasePlan): void {
  const regions = offer.regionalConfigs ?? [];
  if (regions.length === 0) throw invalid('regionalConfigs: an offer needs at least one region.');
  const planRegions = new Map((plan.regionalConfigs ?? []).map((r) => [r.regionCode, r]));
  for (const r of regions) {
    if (!r.regionCode || !planRegions.get(r.regionCode)?.price)
      throw invalid(`Region ${r.regionCode} is not priced on base plan ${plan.basePlanId}.`);
  }
  const phases = offer.phases ?? [];
  if (phases.length < 1 || phases.length > 2) throw invalid('phases: an offer has one or two phases.');
  phases.forEach((ph, i) => {
    if (!Number.isInteger(ph.recurrenceCount) || (ph.recurrenceCount ?? 0) < 1)
      throw invalid(`phases[${i}].recurrenceCount must be a positive integer.`);
    if (typeof ph.duration !== 'string' || !ISO_DURATION.test(ph.duration) || ph.duration === 'P')
      throw invalid(`phases[${i}].duration must be an ISO 8601 duration.`);
    const configs = ph.regionalConfigs ?? [];
    const codes = new Set(configs.map((c) => c.regionCode));
    if (codes.size !== regions.length || regions.some((r) => !codes.has(r.regionCode))) {
      throw invalid(`phases[${i}].regionalConfigs must contain exactly one entry for each region of the offer.`);
    }
    for (const c of configs) {
      const set = [c.price, c.absoluteDiscount, c.relativeDiscount, c.free].filter((v) => v != null).length;
      if (set !== 1)
        throw invalid(
          `phases[${i}] region ${c.regionCode}: exactly one of price, absoluteDiscount, relativeDiscount, free must be set.`,
        );
      if (c.relativeDiscount != null && !(c.relativeDiscount > 0 && c.relativeDiscount < 1))
        throw invalid(`phases[${i}] region ${c.regionCode}: relativeDiscount must be strictly between 0 and 1.`);
      const m = c.price ?? c.absoluteDiscount;
      if (m) money(m, `phases[${i}]`, c.regionCode!);
    }
  });
}
