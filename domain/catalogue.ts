/**
 * Catalogue rules, shared by the tool server and the dashboard: what a SKU, a tier, a country,
 * a currency, an amount and a per-platform trial may be. Pure (Intl's tables are data, not I/O).
 */
export const TIERS = ['weekly', 'monthly', 'quarterly', 'annual'] as const;
export const PRODUCT_TYPES = ['subscription'] as const;
export const PLATFORMS = ['web', 'desktop', 'ios', 'macos', 'android'] as const;

export const SKU_RE = /^[a-z0-9][a-z0-9_.-]{0,99}$/;
/** Android subscription / base-plan ids: lower-case letters, digits, dots, underscores and hyphens. */
export const ANDROID_ID_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;
export const MAX_AMOUNT_MINOR = 100_000_000_00;

const regions = new Intl.DisplayNames(['en'], { type: 'region' });
const currencies = new Set(Intl.supportedValuesOf('currency'));

/** ISO 3166-1 alpha-2, upper case, a real region. */
export function isCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && regions.of(code) !== code && regions.of(code) !== 'Unknown Region';
}

/** ISO 4217, upper case, a currency in circulation. */
export function isCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && currencies.has(code);
}

export interface PriceInput {
  country: string;
  currency: string;
  amount: number;
}

/** The first thing wrong with a price list, as [param, message]; null when it is fine. */
export function priceProblem(prices: readonly PriceInput[]): [string, string] | null {
  const seen = new Set<string>();
  for (const [i, p] of prices.entries()) {
    if (!isCountry(p.country))
      return [`prices[${i}].country`, `"${p.country}" is not an ISO 3166-1 alpha-2 country code (e.g. US, DE)`];
    if (!isCurrency(p.currency))
      return [`prices[${i}].currency`, `"${p.currency}" is not an ISO 4217 currency code (e.g. USD, EUR)`];
    if (!Number.isInteger(p.amount) || p.amount < 0 || p.amount > MAX_AMOUNT_MINOR)
      return [`prices[${i}].amount`, 'amount is an integer in minor units (cents), 0 or more'];
    const key = `${p.country}:${p.currency}`;
    if (seen.has(key)) return [`prices[${i}]`, `${key} is listed twice`];
    seen.add(key);
  }
  return null;
}

/** Trial length per platform in days (0–365), or null to clear. */
export function trialProblem(t: unknown): string | null {
  if (t === null) return null;
  if (!t || typeof t !== 'object' || Array.isArray(t))
    return 'trial_per_platform is an object of platform → days, or null';
  for (const [k, v] of Object.entries(t)) {
    if (!(PLATFORMS as readonly string[]).includes(k))
      return `unknown platform "${k}" (one of ${PLATFORMS.join(', ')})`;
    if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 365)
      return `trial_per_platform.${k} is whole days, 0–365`;
  }
  return null;
}

/** How many minor-unit digits a currency has (USD 2, JPY 0, BHD 3), from Intl's ISO 4217 data. */
export function minorDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/**
 * A price a person typed ("9.99", "1,000", "500") in minor units of the currency, or null when
 * it is not a plain non-negative amount with at most the currency's decimals. Parsed as text, so
 * 0.29 never turns into 28.999… cents.
 */
export function parseMajorAmount(text: string, currency: string): number | null {
  const m = /^(\d{1,12})(?:\.(\d*))?$/.exec(text.trim().replace(/[,_\s]/g, ''));
  if (!m) return null;
  const digits = minorDigits(currency);
  const frac = m[2] ?? '';
  if (frac.length > digits) return null;
  const amount = Number(m[1]) * 10 ** digits + Number(frac.padEnd(digits, '0') || '0');
  return Number.isSafeInteger(amount) && amount <= MAX_AMOUNT_MINOR ? amount : null;
}

/** Minor units back to the text a person reads ("9.99 USD"). */
export function formatMinorAmount(amount: number, currency: string): string {
  const digits = minorDigits(currency);
  const whole = Math.floor(amount / 10 ** digits);
  const frac = digits ? `.${String(amount % 10 ** digits).padStart(digits, '0')}` : '';
  return `${whole}${frac} ${currency}`;
}
