import type { AppKeys } from '../../db/apps';
import { html } from './html';
import { sdkInstallCommand, sdkModuleUrl } from './sdk-files';

/** The init call of sdk/README.md, filled in with this app's test key and this deployment's API host. */
function snippet(app: AppKeys, apiUrl: string): string {
  return `import { Billing } from '@billing-service/sdk';

const billing = Billing.configure({
  publishableKey: '${app.publishable_key_test}',
  backend: '${apiUrl}',
  appUserId: currentUser.id,
  platform: 'web', // 'web' | 'desktop' | 'ios' | 'macos' | 'android'
});`;
}

/**
 * Publishable keys go into client apps (they only read a user's own entitlements through
 * /v1/sdk), so unlike secret keys they are shown in full, every time, beside the SDK call
 * that uses them.
 */
export function publishableKeys(apps: AppKeys[], apiUrl: string, dashboardUrl: string) {
  const install = sdkInstallCommand(dashboardUrl);
  const moduleUrl = sdkModuleUrl(dashboardUrl);
  return html`<h2>Apps and publishable keys</h2>
<p>Client apps use a publishable key with the SDK. <code>pk_test_…</code> sees test and sandbox
records, <code>pk_live_…</code> live ones. They are safe to ship in an app; secret keys are not.</p>
${apps.map((a) => {
  const id = `app-${a.id}`;
  return html`<section aria-labelledby="${id}"><h3 id="${id}">${a.name}</h3>
<label for="${id}-test">Test publishable key</label>
<input id="${id}-test" type="text" readonly value="${a.publishable_key_test}" class="secret">
<button type="button" class="secondary" data-copy="${id}-test" aria-label="Copy test publishable key of ${a.name}">Copy</button>
<label for="${id}-live">Live publishable key</label>
<input id="${id}-live" type="text" readonly value="${a.publishable_key_live}" class="secret">
<button type="button" class="secondary" data-copy="${id}-live" aria-label="Copy live publishable key of ${a.name}">Copy</button>
<p id="${id}-install-label"><strong>Install the SDK</strong> (served by this service; no other registry has it):</p>
${install ? html`<pre aria-labelledby="${id}-install-label" tabindex="0"><code class="sdk-install">${install}</code></pre>` : html`<p>This server has not built the SDK yet; its operator runs <code>npm run sdk:build</code>.</p>`}
${moduleUrl ? html`<p>In a page without a bundler: <code>&lt;script type="module"&gt;import { Billing } from '${moduleUrl}';&lt;/script&gt;</code></p>` : ''}
<p id="${id}-snippet-label"><strong>Initialise the SDK</strong> (see the SDK README; switch to the live key for production):</p>
<pre aria-labelledby="${id}-snippet-label" tabindex="0"><code>${snippet(a, apiUrl)}</code></pre>
</section>`;
})}`;
}
