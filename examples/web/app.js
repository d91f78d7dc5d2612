// The example app: configure once at start, cache-first check, checkout in a new tab; when
// the tab closes the SDK waits (one request the service holds, ≤ 20 s) for the purchase to
// show. Plain JS so the page runs without a build step; the SDK itself is the built package
// (sdk/dist), served at /sdk/.
import { Billing } from './sdk/index.js';

const config = await (await fetch('./config.json')).json();
// Test hooks (bench/pay-to-premium.ts): `?user=` buys as another app user; `?mode=refresh`
// replays the app's behaviour before the wait existed (refresh, then again every 2.1 s while free).
const params = new URLSearchParams(location.search);
const appUserId = params.get('user') || config.appUserId;
const mode = params.get('mode') === 'refresh' ? 'refresh' : 'wait';
const $ = (id) => document.getElementById(id);
let checkoutTab = null;

// Once, at application start (never inside a render function).
const billing = Billing.configure({
  publishableKey: config.publishableKey,
  backend: config.backend,
  appUserId,
  platform: 'web',
  refreshWindowMs: 2000,
  // The checkout goes into the tab the click opened (opened synchronously, so no popup blocker);
  // resolving when that tab closes is what lets the SDK start its wait then.
  openCheckout: (url) => {
    checkoutTab.location.href = url;
    return new Promise((resolve) => {
      const timer = setInterval(() => checkoutTab.closed && (clearInterval(timer), resolve()), 100);
    });
  },
});

function show(answer) {
  $('status').textContent = answer.isPremium ? 'premium' : 'free';
  $('status').dataset.premium = String(answer.isPremium);
  // When the page first showed premium (ms since the epoch): what the bench reads.
  if (answer.isPremium && !$('status').dataset.premiumAt) $('status').dataset.premiumAt = String(Date.now());
  $('stale').hidden = !answer.stale;
}

function fail(message) {
  $('error').textContent = message;
}

try {
  show(await billing.getEntitlements());
} catch (e) {
  fail(`Could not check your plan: ${e.code ?? e.message}`);
}
$('subscribe').disabled = false;

$('subscribe').addEventListener('click', async () => {
  fail('');
  // Open the tab inside the click (popup blockers), then point it at the checkout URL.
  const tab = (checkoutTab = window.open('about:blank', '_blank'));
  if (mode === 'refresh') return refreshAfterClose(tab);
  // Resolves once the tab closed and the purchase showed (or the wait's bound passed).
  const result = await billing.checkout({ planId: config.planId, product: { kind: 'digital' }, waitForPremium: { timeoutMs: 20_000 } });
  if (result.state === 'error') {
    tab?.close();
    return fail(`Checkout unavailable: ${result.reason}`);
  }
  show(result.entitlements);
});

/** The behaviour before the wait: a forced refresh when the tab closes, then again every 2.1 s while free. */
async function refreshAfterClose(tab) {
  const result = await billing.checkout({ planId: config.planId, product: { kind: 'digital' } });
  if (result.state === 'error') {
    tab?.close();
    return fail(`Checkout unavailable: ${result.reason}`);
  }
  const deadline = Date.now() + 20_000;
  let answer = await billing.refresh();
  while (!answer.isPremium && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 2100));
    answer = await billing.refresh();
  }
  show(answer);
}
