import type { EmulatorStore } from '../common/types';

/** A stored Stripe object: the public fields plus `_`-prefixed emulator bookkeeping (owner account). */
export type StripeObject = Record<string, unknown> & { id: string; livemode?: boolean; _account?: string };

/** Who is calling: the account acted on (after Stripe-Account) and the key's mode. */
export interface Scope {
  account: string;
  livemode: boolean;
}

/** Ids are unique per account and mode (custom product/coupon ids may repeat across accounts). */
function keyOf(account: string | undefined, livemode: boolean | undefined, id: string): string {
  return `${account ?? ''}|${livemode ? 1 : 0}|${id}`;
}

/**
 * Id-indexed access to the emulator store. Objects live in the shared store under their
 * Stripe kind (`products`, `prices`, …) so GET /__control/state shows them and a state
 * file keeps them; the index is rebuilt lazily after a restart.
 */
export class Repo {
  private indexes = new Map<string, Map<string, StripeObject>>();

  constructor(readonly store: EmulatorStore) {}

  private index(kind: string): Map<string, StripeObject> {
    let idx = this.indexes.get(kind);
    if (!idx) {
      idx = new Map();
      for (const o of this.store.list(kind) as StripeObject[]) idx.set(keyOf(o._account, o.livemode, o.id), o);
      this.indexes.set(kind, idx);
    }
    return idx;
  }

  insert<T extends StripeObject>(kind: string, obj: T): T {
    this.index(kind).set(keyOf(obj._account, obj.livemode, obj.id), obj);
    this.store.insert(kind, obj);
    return obj;
  }

  remove(kind: string, obj: StripeObject): void {
    this.index(kind).delete(keyOf(obj._account, obj.livemode, obj.id));
    const list = this.store.list(kind);
    const i = list.indexOf(obj);
    if (i !== -1) list.splice(i, 1);
    this.store.save();
  }

  /** Objects that belong to no account (accounts themselves, OAuth codes). */
  get(kind: string, id: string): StripeObject | undefined {
    return this.index(kind).get(keyOf(undefined, false, id));
  }

  /** The object if it belongs to this account and mode (a test key never sees live objects). */
  getScoped(kind: string, id: string, scope: Scope): StripeObject | undefined {
    return this.index(kind).get(keyOf(scope.account, scope.livemode, id));
  }

  /** Newest first, as Stripe lists. */
  listScoped(kind: string, scope: Scope, pred?: (o: StripeObject) => boolean): StripeObject[] {
    const all = this.store.list(kind) as StripeObject[];
    const out: StripeObject[] = [];
    for (let i = all.length - 1; i >= 0; i--) {
      const o = all[i];
      if (o._account === scope.account && o.livemode === scope.livemode && (!pred || pred(o))) out.push(o);
    }
    return out;
  }

  all(kind: string): StripeObject[] {
    return this.store.list(kind) as StripeObject[];
  }

  /** Persist after an in-place change. */
  touch(): void {
    this.store.save();
  }
}

/** The public Stripe shape of a stored object: bookkeeping fields removed, deep-copied. */
export function render(obj: StripeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k[0] === '_') continue;
    out[k] = v && typeof v === 'object' ? structuredClone(v) : v;
  }
  return out;
}
