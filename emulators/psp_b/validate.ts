import { invalidField, type FieldError } from './respond';

export const CURRENCIES = new Set([
  'USD',
  'EUR',
  'GBP',
  'JPY',
  'AUD',
  'CAD',
  'CHF',
  'CLP',
  'HKD',
  'SGD',
  'SEK',
  'ARS',
  'BRL',
  'CNY',
  'COP',
  'CZK',
  'DKK',
  'HUF',
  'ILS',
  'INR',
  'KRW',
  'MXN',
  'NOK',
  'NZD',
  'PEN',
  'PLN',
  'RUB',
  'THB',
  'TRY',
  'TWD',
  'UAH',
  'VND',
  'ZAR',
]);
export const TAX_CATEGORIES = new Set([
  'digital-goods',
  'ebooks',
  'implementation-services',
  'professional-services',
  'saas',
  'software-programming-services',
  'standard',
  'training-services',
  'website-hosting',
]);
export const INTERVALS = new Set(['day', 'week', 'month', 'year']);

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Collects field errors the way Paddle reports them: all at once, in one 400 invalid_field. */
export class Checker {
  readonly errors: FieldError[] = [];
  constructor(readonly body: Record<string, unknown>) {}

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  /** Paddle rejects fields it does not know rather than ignoring them. */
  only(allowed: string[]): this {
    for (const k of Object.keys(this.body)) if (!allowed.includes(k)) this.fail(k, 'unknown field');
    return this;
  }

  string(field: string, opts: { required?: boolean; nullable?: boolean; max?: number; min?: number } = {}): this {
    const v = this.body[field];
    if (v === undefined) {
      if (opts.required) this.fail(field, 'must be provided as part of the request');
      return this;
    }
    if (v === null) {
      if (!opts.nullable) this.fail(field, 'must not be null');
      return this;
    }
    if (typeof v !== 'string') return (this.fail(field, 'must be a string'), this);
    if (v.length < (opts.min ?? (opts.required ? 1 : 0)))
      this.fail(field, `minimum length of ${opts.min ?? 1} not met`);
    if (opts.max && v.length > opts.max)
      this.fail(field, `maximum length of ${opts.max} exceeded. provided value length ${v.length}`);
    return this;
  }

  oneOf(field: string, values: Set<string>, opts: { required?: boolean; nullable?: boolean } = {}): this {
    const v = this.body[field];
    if (v === undefined) {
      if (opts.required) this.fail(field, 'must be provided as part of the request');
    } else if (v === null) {
      if (!opts.nullable) this.fail(field, 'must not be null');
    } else if (typeof v !== 'string' || !values.has(v)) {
      this.fail(field, `must be one of ${[...values].join(', ')}`);
    }
    return this;
  }

  boolean(field: string): this {
    const v = this.body[field];
    if (v !== undefined && typeof v !== 'boolean') this.fail(field, 'must be a boolean');
    return this;
  }

  customData(field = 'custom_data'): this {
    const v = this.body[field];
    if (v !== undefined && v !== null && !isObject(v)) this.fail(field, 'must be a valid JSON object');
    return this;
  }

  money(field: string, v: unknown, required = true): void {
    if (v === undefined && !required) return;
    if (!isObject(v)) return this.fail(field, 'must be an object with amount and currency_code');
    if (typeof v.amount !== 'string' || !/^\d+$/.test(v.amount))
      this.fail(`${field}.amount`, 'must be a string of digits, in the lowest denomination');
    if (typeof v.currency_code !== 'string' || !CURRENCIES.has(v.currency_code))
      this.fail(`${field}.currency_code`, 'unsupported currency code');
  }

  period(field: string, opts: { required?: boolean } = {}): this {
    const v = this.body[field];
    if (v === undefined || v === null) {
      if (opts.required) this.fail(field, 'must be provided as part of the request');
      return this;
    }
    if (!isObject(v)) return (this.fail(field, 'must be an object with interval and frequency'), this);
    if (typeof v.interval !== 'string' || !INTERVALS.has(v.interval))
      this.fail(`${field}.interval`, 'must be one of day, week, month, year');
    if (!Number.isInteger(v.frequency) || (v.frequency as number) < 1)
      this.fail(`${field}.frequency`, 'must be an integer greater than or equal to 1');
    return this;
  }

  overrides(field = 'unit_price_overrides'): this {
    const v = this.body[field];
    if (v === undefined) return this;
    if (!Array.isArray(v)) return (this.fail(field, 'must be an array'), this);
    const seen = new Set<string>();
    v.forEach((o, i) => {
      const f = `${field}[${i}]`;
      if (!isObject(o)) return this.fail(f, 'must be an object');
      if (!Array.isArray(o.country_codes) || o.country_codes.length === 0)
        return this.fail(`${f}.country_codes`, 'must be a non-empty array');
      for (const c of o.country_codes) {
        if (typeof c !== 'string' || !/^[A-Z]{2}$/.test(c))
          this.fail(`${f}.country_codes`, `invalid country code ${String(c)}`);
        else if (seen.has(c)) this.fail(`${f}.country_codes`, `country code ${c} is used in more than one override`);
        else seen.add(c);
      }
      this.money(`${f}.unit_price`, o.unit_price);
    });
    return this;
  }

  done(): void {
    if (this.errors.length) throw invalidField(this.errors);
  }
}
