import type { FormObject, FormValue } from './form';
import { invalidParam, missingParam, unknownParam } from './errors';

/** Currencies Stripe accepts for prices (lower case, as the API speaks them). */
export const CURRENCIES = new Set(
  'usd aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bhd bif bmd bnd bob brl bsd bwp byn bzd cad cdf chf clp cny cop crc cve czk djf dkk dop dzd egp etb eur fjd fkp gbp gel gip gmd gnf gtq gyd hkd hnl htg huf idr ils inr isk jmd jod jpy kes kgs khr kmf krw kwd kyd kzt lak lbp lkr lrd lsl mad mdl mga mkd mmk mnt mop mur mvr mwk mxn myr mzn nad ngn nio nok npr nzd omr pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd scr sek sgd shp sle sos srd std szl thb tjs tnd top try ttd twd tzs uah ugx uyu uzs vnd vuv wst xaf xcd xof xpf yer zar zmw'.split(
    ' ',
  ),
);

export function allowOnly(body: FormObject, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) if (!allowed.includes(key)) throw unknownParam(key);
}

export function str(body: FormObject, key: string, required = false): string | undefined {
  const v = body[key];
  if (v === undefined) {
    if (required) throw missingParam(key);
    return undefined;
  }
  if (typeof v !== 'string')
    throw invalidParam(key, `Invalid string: ${key} must be a string`, 'parameter_invalid_string');
  if (required && v === '')
    throw invalidParam(
      key,
      `You passed an empty string for '${key}'. We assume empty values are an attempt to unset a parameter; however '${key}' cannot be unset. You should remove '${key}' from your request or supply a non-empty value.`,
    );
  return v;
}

export function int(
  body: FormObject,
  key: string,
  opts: { required?: boolean; min?: number; max?: number; param?: string } = {},
): number | undefined {
  const param = opts.param ?? key;
  const raw = body[key];
  if (raw === undefined || raw === '') {
    if (opts.required) throw missingParam(param);
    return undefined;
  }
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw))
    throw invalidParam(param, `Invalid integer: ${String(raw)}`, 'parameter_invalid_integer');
  const n = Number(raw);
  if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max)) {
    const range =
      opts.max !== undefined ? `between ${opts.min ?? 0} and ${opts.max}` : `greater than or equal to ${opts.min}`;
    throw invalidParam(param, `This value must be ${range}.`, 'parameter_invalid_integer');
  }
  return n;
}

export function num(body: FormObject, key: string, param = key): number | undefined {
  const raw = body[key];
  if (raw === undefined || raw === '') return undefined;
  const n = typeof raw === 'string' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) throw invalidParam(param, `Invalid decimal: ${String(raw)}`, 'parameter_invalid_decimal');
  return n;
}

export function bool(body: FormObject, key: string, param = key): boolean | undefined {
  const raw = body[key];
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw invalidParam(param, `Invalid boolean: ${String(raw)}`, 'parameter_invalid_boolean');
}

export function obj(body: FormObject, key: string, param = key): FormObject | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidParam(param, `Invalid hash`, 'parameter_invalid_hash');
  return v as FormObject;
}

export function arr(body: FormObject, key: string, param = key): FormValue[] | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw invalidParam(param, `Invalid array`, 'parameter_invalid_array');
  return v;
}

export function currency(body: FormObject, key: string, required = false, param = key): string | undefined {
  const c = str(body, key, required);
  if (c === undefined) return undefined;
  const lower = c.toLowerCase();
  if (!CURRENCIES.has(lower))
    throw invalidParam(
      param,
      `Invalid currency: ${c}. Stripe currently supports these currencies: ${[...CURRENCIES].slice(0, 12).join(', ')}, …`,
      'parameter_invalid_string',
    );
  return lower;
}

/** `one_of` enum check. */
export function oneOf<T extends string>(
  body: FormObject,
  key: string,
  values: readonly T[],
  required = false,
  param = key,
): T | undefined {
  const v = str(body, key, required);
  if (v === undefined) return undefined;
  if (!values.includes(v as T))
    throw invalidParam(param, `Invalid ${param}: must be one of ${values.join(', ')}`, 'parameter_invalid_string');
  return v as T;
}

/**
 * Stripe metadata semantics: on create the hash is stored; on update keys merge, an empty
 * value unsets a key, and `metadata=` (empty string) unsets every key. 50 keys, 40/500 chars.
 */
export function applyMetadata(
  current: Record<string, string>,
  body: FormObject,
  key = 'metadata',
): Record<string, string> {
  const raw = body[key];
  if (raw === undefined) return current;
  if (raw === '') return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParam(key, 'Invalid hash', 'parameter_invalid_hash');
  const next = { ...current };
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string')
      throw invalidParam(
        `${key}[${k}]`,
        'Invalid metadata value: metadata values must be strings',
        'parameter_invalid_string',
      );
    if (k.length > 40)
      throw invalidParam(`${key}[${k}]`, `Metadata keys can have up to 40 characters; "${k}" is too long.`);
    if (v.length > 500)
      throw invalidParam(
        `${key}[${k}]`,
        `Metadata values can have up to 500 characters, but you passed in a value that is ${v.length} characters.`,
      );
    if (v === '') delete next[k];
    else next[k] = v;
  }
  if (Object.keys(next).length > 50) throw invalidParam(key, 'You can specify up to 50 keys in metadata.');
  return next;
}
