// The example app: configure once at start, cache-first check, checkout in a new tab,
// one refresh when the tab closes. Plain JS so the page runs without a build step;
// the SDK itself is the built package (sdk/dist), served at /sdk/.
import { Billing } from './sdk/index.js';

const config = await (await fetch('./config.json')).json();
const $ = (id) => document.getElementById(id);
let checkoutTab = null;

// Once, at application start (never inside a render function).
const billing = Billing.configure({
  publishableKey: config.publishableKey,
  backend: config.backend,
  appUserId: config.appUserId,
  platform: 'web',
  refreshWindowMs: 2000,
  // The checkout goes into the tab the click opened (opened synchronously, so no popup blocker).
  openCheckout: (url) => {
    checkoutTab.location.href = url;
  },
});

function show(answer) {
  $('status').textContent = answer.isPremium ? 'premium' : 'free';
  $('status').dataset.premium = String(answer.isPremium);
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
  const result = await billing.checkout({ planId: config.planId, product: { kind: 'digital' } });
  if (result.state !== 'opened') {
    tab?.close();
    return fail(`Checkout unavailable: ${result.reason}`);
  }
  // The app forces one refresh when the checkout tab closes. The webhook may land a moment
  // after the tab closes, so while still free it asks again (coalesced: at most one request
  // per refresh window).
  await new Promise((resolve) => {
    const timer = setInterval(() => tab.closed && (clearInterval(timer), resolve()), 300);
  });
  const deadline = Date.now() + 20_000;
  let answer = await billing.refresh();
  while (!answer.isPremium && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 2100));
    answer = await billing.refresh();
  }
  show(answer);
});
