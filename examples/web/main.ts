import { execFileSync } from 'node:child_process';
import { startExampleServer } from './serve';
import { EXAMPLE_WAIT_DEFAULT_MS, waitUntilSellable } from './sellable';

/**
 * `npm run example:web`: the example app against a running `npm start`. The publishable
 * key is the demo tenant's unless BILLING_PUBLISHABLE_KEY is set. It serves once the plan is
 * sellable (npm start's first sync may still be running), waiting a bounded time for it.
 */
const apiPort = process.env.API_PORT ?? '4000';
const backend = process.env.BILLING_API_URL ?? `http://127.0.0.1:${apiPort}`;
const publishableKey =
  process.env.BILLING_PUBLISHABLE_KEY ??
  (
    JSON.parse(
      execFileSync('npm', ['run', '-s', 'admin', '--', 'demo:publishable-key', '--json'], { encoding: 'utf8' }),
    ) as { publishable_key: string }
  ).publishable_key;
const planId = process.env.PLAN_ID ?? 'premium_monthly';
const sellable = await waitUntilSellable(
  { backend, publishableKey, planId, timeoutMs: Number(process.env.EXAMPLE_WAIT_MS ?? EXAMPLE_WAIT_DEFAULT_MS) },
  console.log,
);
if (!sellable.ok) {
  console.error(
    `The demo cannot sell ${planId} yet: ${sellable.reason}. See the "Demo catalogue" line of \`npm start\`.`,
  );
  process.exit(1);
}
const server = await startExampleServer(
  { backend, publishableKey, appUserId: process.env.APP_USER_ID ?? 'web-example-user', planId },
  Number(process.env.EXAMPLE_PORT ?? 4300),
);
console.log(
  `Example web app: ${server.url}  (API ${backend}): open it, Subscribe, Pay on the test checkout, and the page says premium.`,
);
