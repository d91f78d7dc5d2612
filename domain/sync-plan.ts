import type { DriftFinding } from './drift';
import type { Mode, ProviderId, SyncTarget } from './providers';

/**
 * The sync's rules, pure: what the confirm count is, when a drain is refused, which
 * product/provider pairs and links a run writes, what goes to a person, which providers are
 * skipped and why, and what each provider's event of a run says. The API, the sync-run
 * workflow and the tests call these; the facts are read in db/sync-facts.ts.
 */

/** One configured provider, judged on its speaking connection, with the modes it is synced in. */
export interface ProviderSetupFacts {
  provider: ProviderId;
  connectionId: string;
  accountRef: string;
  is_active: boolean;
  has_test_credential: boolean;
  has_live_credential: boolean;
  modes: Mode[];
}

export const syncTargets = (setups: readonly ProviderSetupFacts[]): SyncTarget[] =>
  setups.flatMap((s) =>
    s.modes.map((mode) => ({ provider: s.provider, connectionId: s.connectionId, accountRef: s.accountRef, mode })),
  );

// ── The gate.

/** The count a caller confirms: every finding, automatable or not. */
export const confirmCountOf = (findings: readonly DriftFinding[]): number => findings.length;

/** A sync that does not run, and why; the API answers it with the status the code names. */
export type SyncRefusal =
  | { refused: 'drift_incomplete'; detail: string }
  | { refused: 'count_mismatch'; detail: string; expected: number; received: number | null }
  | { refused: 'sync_in_progress'; detail: string };

/** A target the drift read could not read, with the provider's reason. */
export interface UnreadTarget {
  provider: ProviderId;
  mode: Mode;
  reason: string;
}

/** The targets a drift read could not read, from its per-target outcomes. */
export const unreadTargets = (
  outcomes: readonly { target: SyncTarget; snapshot: unknown; reason: string | null }[],
): UnreadTarget[] =>
  outcomes
    .filter((o) => !o.snapshot)
    .map((o) => ({ provider: o.target.provider, mode: o.target.mode, reason: o.reason ?? 'unreadable' }));

/** Any unread target makes the count unknown: nothing is reported or drained. */
export function driftIncomplete(unread: readonly UnreadTarget[]): SyncRefusal | null {
  if (unread.length === 0) return null;
  const names = unread.map((u) => `${u.provider} (${u.mode}): ${u.reason}`).join('; ');
  return {
    refused: 'drift_incomplete',
    detail: `Could not read ${names}. The count is unknown, so nothing is reported or drained; retry when the provider answers.`,
  };
}

/** The drain runs only on the count the caller read; a missing count is a mismatch too. */
export function countGate(findings: readonly DriftFinding[], received: number | null): SyncRefusal | null {
  const expected = confirmCountOf(findings);
  if (received === expected) return null;
  return {
    refused: 'count_mismatch',
    detail: `${expected} item(s) need attention now; re-read GET /v1/sync and retry with its confirm_count.`,
    expected,
    received,
  };
}

export const SYNC_IN_PROGRESS: SyncRefusal = {
  refused: 'sync_in_progress',
  detail: 'A sync for this tenant is running; wait for it (GET /v1/sync/events?run_id=…) and retry.',
};

// ── Outcomes.

/** What happened to one subject (a product at a provider, or a whole provider) in a run. */
export interface SyncOutcome {
  provider: ProviderId;
  /** The mode it happened in; null for a provider-wide outcome (skipped). */
  mode: Mode | null;
  /** The product it is about; null when it is about the provider. */
  product: { id: string; sku: string } | null;
  ok: boolean;
  skipped: boolean;
  detail: string;
}

/** Connected providers a run cannot use, with the reason (not a success). `only` narrows to one provider. */
export function skippedProviders(setups: readonly ProviderSetupFacts[], only?: ProviderId): SyncOutcome[] {
  return setups
    .filter((s) => s.modes.length === 0 && (!only || s.provider === only))
    .map((s) => ({
      provider: s.provider,
      mode: null,
      product: null,
      ok: false,
      skipped: true,
      detail: s.is_active
        ? `${s.provider} holds no credential to sync with; enter one in the dashboard`
        : `the ${s.provider} connection is inactive`,
    }));
}

/** A provider asked for by name that the tenant has not connected. */
export const notConnected = (provider: ProviderId): SyncOutcome => ({
  provider,
  mode: null,
  product: null,
  ok: false,
  skipped: true,
  detail: `${provider} is not connected to this account`,
});

// ── The plan.

export interface PlannedProduct {
  productId: string;
  sku: string;
}

export interface PlannedLink {
  appId: string;
  productId: string;
  sku: string;
}

/** What a run writes at one target: products (with their prices) first, then the apps' links. */
export interface ProviderWork {
  target: SyncTarget;
  products: PlannedProduct[];
  links: PlannedLink[];
}

/**
 * The purchase entry points at one target: the apps that sell through it and the (app, product) pairs it already has.
 */
export interface TargetLinkFacts {
  target: SyncTarget;
  apps: string[];
  have: { appId: string; productId: string }[];
}

/** (app, product) pairs with no purchase entry point at the target, apps first then products, in the given order. */
export function missingLinks(facts: TargetLinkFacts, products: readonly PlannedProduct[]): PlannedLink[] {
  const seen = new Set(facts.have.map((h) => `${h.appId}:${h.productId}`));
  return facts.apps.flatMap((appId) =>
    products
      .filter((p) => !seen.has(`${appId}:${p.productId}`))
      .map((p) => ({ appId, productId: p.productId, sku: p.sku })),
  );
}

/** Findings no sync can close: they go to `needs_human`. */
export const needsHuman = (findings: readonly DriftFinding[]): DriftFinding[] => findings.filter((f) => !f.automatable);

/**
 * The drain of a drift report. Per target: every automatable product-missing-at-provider
 * finding is a product write; every active product not blocked there (a finding no sync can
 * close) gets its missing links. A target with neither is left out (its provider's event says
 * "nothing to do").
 */
export function planDrain(input: {
  findings: readonly DriftFinding[];
  products: readonly PlannedProduct[];
  links: readonly TargetLinkFacts[];
}): ProviderWork[] {
  const work: ProviderWork[] = [];
  for (const facts of input.links) {
    const { target } = facts;
    const here = input.findings.filter(
      (f) =>
        f.kind === 'product-missing-at-provider' &&
        f.provider === target.provider &&
        f.mode === target.mode &&
        f.product?.id,
    );
    const products = here.filter((f) => f.automatable).map((f) => ({ productId: f.product!.id!, sku: f.product!.sku }));
    const blocked = new Set(here.filter((f) => !f.automatable).map((f) => f.product!.id));
    const links = missingLinks(
      facts,
      input.products.filter((p) => !blocked.has(p.productId)),
    );
    if (products.length || links.length) work.push({ target, products, links });
  }
  return work;
}

/**
 * One product to every target given (already narrowed to the provider asked for): always written, links where missing.
 */
export function planProductSync(product: PlannedProduct, links: readonly TargetLinkFacts[]): ProviderWork[] {
  return links.map((facts) => ({ target: facts.target, products: [product], links: missingLinks(facts, [product]) }));
}

/** Everything a run does, decided before its first write. */
export interface RunPlan {
  work: ProviderWork[];
  needsHuman: DriftFinding[];
  skipped: SyncOutcome[];
  /** The providers the run checks, each of which records one event, with the modes it is synced in. */
  providers: { provider: ProviderId; modes: Mode[] }[];
}

/** A drain (POST /v1/sync) of every configured provider, once the gate passed. */
export function drainRunPlan(input: {
  setups: readonly ProviderSetupFacts[];
  findings: readonly DriftFinding[];
  products: readonly PlannedProduct[];
  links: readonly TargetLinkFacts[];
}): RunPlan {
  return {
    work: planDrain(input),
    needsHuman: needsHuman(input.findings),
    skipped: skippedProviders(input.setups),
    providers: input.setups.map((s) => ({ provider: s.provider, modes: s.modes })),
  };
}

/**
 * One product to its providers (or to `only`), whatever drift says: a provider asked for and not connected is skipped.
 */
export function productRunPlan(input: {
  setups: readonly ProviderSetupFacts[];
  product: PlannedProduct;
  links: readonly TargetLinkFacts[];
  only?: ProviderId;
}): RunPlan {
  const { setups, only } = input;
  const skipped = skippedProviders(setups, only);
  const involved = setups
    .filter((s) => !only || s.provider === only)
    .map((s) => ({ provider: s.provider, modes: s.modes }));
  if (only && !setups.some((s) => s.provider === only)) {
    skipped.push(notConnected(only));
    involved.push({ provider: only, modes: [] });
  }
  return { work: planProductSync(input.product, input.links), needsHuman: [], skipped, providers: involved };
}

// ── Events: one per provider of a run.

export type SyncEventStatus = 'succeeded' | 'failed' | 'skipped';
/** `nothing_to_do`: the provider was checked and already matched; `synced`: it was written to. */
export type SyncEventOutcome = 'synced' | 'nothing_to_do' | 'failed' | 'skipped';

export interface SyncEvent {
  provider: ProviderId;
  status: SyncEventStatus;
  reason: string | null;
  detail: { outcome: SyncEventOutcome; synced: number; failed: number; modes: Mode[] };
}

/** What a provider that did work (or failed to) records: `failed` with every failure's detail as the reason. */
export function workedEvent(
  provider: ProviderId,
  modes: Mode[],
  synced: number,
  failures: readonly SyncOutcome[],
): SyncEvent {
  const failed = failures.length > 0;
  return {
    provider,
    status: failed ? 'failed' : 'succeeded',
    reason: failed ? failures.map((x) => x.detail).join('; ') : null,
    detail: { outcome: failed ? 'failed' : 'synced', synced, failed: failures.length, modes },
  };
}

/**
 * The event of every provider of a run, in the order given: a provider with work records what
 * it did, a skipped one why, and a configured provider with nothing to write "nothing to do",
 * so a run's events always name every provider it checked.
 */
export function runEvents(
  plan: Pick<RunPlan, 'providers' | 'skipped'>,
  worked: ReadonlyMap<ProviderId, SyncEvent>,
): SyncEvent[] {
  return plan.providers.map(({ provider, modes }) => {
    const done = worked.get(provider);
    if (done) return done;
    const skip = plan.skipped.find((s) => s.provider === provider);
    if (skip)
      return {
        provider,
        status: 'skipped',
        reason: skip.detail,
        detail: { outcome: 'skipped', synced: 0, failed: 0, modes: [] },
      };
    return {
      provider,
      status: 'succeeded',
      reason: null,
      detail: { outcome: 'nothing_to_do', synced: 0, failed: 0, modes },
    };
  });
}
