import { authKindOf, isStoreProvider, type AuthKind, type ProviderId } from './providers';

/**
 * Readiness: can an app transact at this provider, in live and in test mode, and what is
 * missing. Pure: the API, the dashboard and the tests call the same function on facts read
 * elsewhere. The rule behind every field is tabled in docs/readiness-and-drift.md.
 */

/** What is known about one configured provider (its chosen connection and what reached it). */
export interface ReadinessFacts {
  provider: ProviderId;
  is_active: boolean;
  has_test_credential: boolean;
  has_live_credential: boolean;
  has_webhook_secret: boolean;
  /** Active products in the catalogue. */
  products: number;
  /** Active products whose object at this provider carries their current version, per mode. */
  synced_test: number;
  synced_live: number;
  /** A real sandbox purchase reached the service (an entitlement with is_sandbox true). */
  sandbox_evidence: boolean;
}

export type TestMechanism = 'test_api_key' | 'license_tester' | 'sandbox_apple_id';

export interface ProviderReadiness {
  provider: ProviderId;
  auth_kind: AuthKind;
  is_active: boolean;
  live_ready: boolean;
  test_ready: boolean;
  live_detail: string;
  test_detail: string;
  test_mechanism: TestMechanism;
  human_action: string | null;
  manual_steps: string[] | null;
  console_url: string | null;
}

export interface ReadinessSummary {
  total: number;
  needs_manual_action: number;
  live_ready: number;
  test_ready: number;
}

/** Where the service's own pages live, so steps can name the exact URL to register. */
export interface ReadinessContext {
  dashboardUrl: string;
}

export const CONSOLE_URLS: Record<'store_android' | 'store_ios', string> = {
  store_android: 'https://play.google.com/console',
  store_ios: 'https://appstoreconnect.apple.com',
};

/** One missing thing, in the order a person should fix them; `person` when no automation can close it. */
interface Gap {
  action: string;
  person: boolean;
}

const SYNC_ACTION =
  'Run a sync (GET /v1/sync, then POST /v1/sync with its confirm_count) to create the products there.';

function modeGaps(f: ReadinessFacts, mode: 'test' | 'live'): Gap[] {
  const gaps: Gap[] = [];
  const name = f.provider;
  const hasCredential = mode === 'test' ? f.has_test_credential : f.has_live_credential;
  if (!hasCredential) {
    const what = isStoreProvider(name) ? 'store API credential' : `${mode} credential`;
    gaps.push({ action: `Enter the ${what} for ${name} in the dashboard (Providers).`, person: true });
  }
  if (mode === 'live' && !isStoreProvider(name) && !f.has_webhook_secret) {
    gaps.push({ action: `Enter the webhook signing secret for ${name} in the dashboard (Providers).`, person: true });
  }
  if (f.products === 0)
    gaps.push({ action: 'Create a product (dashboard, or the billing_create_product tool).', person: false });
  else if ((mode === 'test' ? f.synced_test : f.synced_live) === 0) gaps.push({ action: SYNC_ACTION, person: false });
  return gaps;
}

function storeSteps(f: ReadinessFacts, ctx: ReadinessContext): string[] {
  const webhook = `${ctx.dashboardUrl}/api/webhooks/${f.provider}`;
  if (f.provider === 'store_android') {
    return [
      'In Play Console → Setup → License testing, add the Google account of the tester as a license tester.',
      `In Play Console → Monetize → Monetization setup, point Real-time developer notifications at a Pub/Sub topic whose push subscription posts to ${webhook}.`,
      'Publish a build with the store billing module to an internal testing track and install it on a device from the opt-in link.',
      'On the device, signed in as the license tester, buy the subscription in the app (Play offers test payment methods).',
      'The app registers the purchase (POST /v1/sdk/store-purchases); this row turns test-ready by itself once it arrives. Do not mark it done by hand.',
    ];
  }
  return [
    'In App Store Connect → Users and Access → Sandbox → Test Accounts, create a Sandbox Apple ID.',
    `In App Store Connect → App Information → App Store Server Notifications, set the Sandbox URL (Version 2) to ${webhook}.`,
    'Install a development or TestFlight build on a device and sign in with the Sandbox Apple ID (Settings → App Store → Sandbox Account).',
    'Buy the subscription in the app with the sandbox account.',
    'The app registers the purchase (POST /v1/sdk/store-purchases); this row turns test-ready by itself once it arrives. Do not mark it done by hand.',
  ];
}

function detail(ready: boolean, gaps: Gap[], readyText: string): string {
  return ready ? readyText : `Not ready: ${gaps.map((g) => g.action.replace(/\.$/, '')).join('; ')}.`;
}

interface Evaluated {
  row: ProviderReadiness;
  needsPerson: boolean;
}

function evaluate(f: ReadinessFacts, ctx: ReadinessContext): Evaluated {
  const store = isStoreProvider(f.provider);
  const inactive: Gap[] = f.is_active
    ? []
    : [{ action: `Reactivate the ${f.provider} connection in the dashboard (Providers).`, person: true }];
  const liveGaps = [...inactive, ...modeGaps(f, 'live')];
  // Stores offer no API to enable or assert test mode: only evidence counts, never configuration.
  const testGaps: Gap[] = store
    ? f.sandbox_evidence
      ? []
      : [{ action: 'Complete a sandbox purchase on a device: follow manual_steps.', person: true }]
    : [...inactive, ...modeGaps(f, 'test')];
  const test_ready = testGaps.length === 0;
  const live_ready = liveGaps.length === 0;
  // The first missing thing: test mode comes first, as an app is tried before it sells.
  const next = testGaps[0] ?? liveGaps[0] ?? null;
  const row: ProviderReadiness = {
    provider: f.provider,
    auth_kind: authKindOf(f.provider),
    is_active: f.is_active,
    live_ready,
    test_ready,
    live_detail: detail(
      live_ready,
      liveGaps,
      store
        ? 'Live: credential set and products synced to the store.'
        : 'Live: live credential, webhook signing secret and a live product sync are in place.',
    ),
    test_detail: store
      ? test_ready
        ? 'Test: a sandbox purchase reached the service.'
        : 'Test: the store offers no API to enable test mode; it is proven only when a real sandbox purchase reaches the service.'
      : detail(test_ready, testGaps, 'Test: test credential set and products synced in test mode.'),
    test_mechanism:
      f.provider === 'store_android'
        ? 'license_tester'
        : f.provider === 'store_ios'
          ? 'sandbox_apple_id'
          : 'test_api_key',
    human_action: next?.action ?? null,
    manual_steps: store && !f.sandbox_evidence ? storeSteps(f, ctx) : null,
    console_url: store && !f.sandbox_evidence ? CONSOLE_URLS[f.provider as 'store_android' | 'store_ios'] : null,
  };
  return { row, needsPerson: next?.person ?? false };
}

/** Rows in the spec's provider order, with a summary whose counts add up from the rows. */
export function readinessReport(
  facts: readonly ReadinessFacts[],
  ctx: ReadinessContext,
): { providers: ProviderReadiness[]; summary: ReadinessSummary } {
  const evaluated = facts.map((f) => evaluate(f, ctx));
  const providers = evaluated.map((e) => e.row);
  return {
    providers,
    summary: {
      total: providers.length,
      needs_manual_action: evaluated.filter((e) => e.needsPerson).length,
      live_ready: providers.filter((p) => p.live_ready).length,
      test_ready: providers.filter((p) => p.test_ready).length,
    },
  };
}
