import { execFileSync } from 'node:child_process';
import { startExampleServer } from './serve';

/**
 * `npm run example:web`: the example app against a running `npm start`. The publishable
 * key is the demo tenant's unless BILLING_PUBLISHABLE_KEY is set.
 */
const apiPort = process.env.API_PORT ?? '4000';
const backend = process.env.BILLING_API_URL ?? `http://127.0.0.1:${apiPort}`;
const publishableKey =
  process.env.BILLING_PUBLISHABLE_KEY ??
  (JSON.parse(execFileSync('npm', ['run', '-s', 'admin', '--', 'demo', '--json'], { encoding: 'utf8' })) as { publishable_key: string }).publishable_key;
const server = await startExampleServer(
  { backend, publishableKey, appUserId: process.env.APP_USER_ID ?? 'web-example-user', planId: process.env.PLAN_ID ?? 'premium_monthly' },
  Number(process.env.EXAMPLE_PORT ?? 4300),
);
console.log(`Example web app: ${server.url}  (API ${backend})`);
