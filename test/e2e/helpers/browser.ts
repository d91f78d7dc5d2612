import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startApi } from '../../helpers/api';
import { launchBrowser } from './chromium';

export { launchBrowser };

/** Screenshots land in test-artifacts/screenshots (git-ignored), one per page visited. */
export const SCREENSHOT_DIR = path.resolve('test-artifacts/screenshots');

/**
 * A picture of the page for a person to look at, taken only when `SCREENSHOTS=1`: no test reads
 * them, and a full-page one costs Chromium about a quarter of a second of CPU (71 in a full run).
 */
export async function screenshot(
  p: Page,
  name: string,
  { dir = SCREENSHOT_DIR, fullPage = true }: { dir?: string; fullPage?: boolean } = {},
): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  fs.mkdirSync(dir, { recursive: true });
  await p.screenshot({ path: path.join(dir, `${name}.png`), fullPage });
}

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core in the page (WCAG 2.1 A/AA rules) and fails on any serious or critical violation. */
export async function expectAccessible(p: Page, label: string): Promise<void> {
  // Evaluated over the DevTools protocol, which the pages' CSP (script-src 'self') does not
  // govern; an injected <script> tag would be refused, as it should be.
  await p.evaluate(axeSource);
  const violations = (await p.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: unknown[] }> } }
    ).axe;
    const r = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return r.violations;
  })) as AxeViolation[];
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  if (bad.length > 0) throw new Error(`accessibility violations on ${label}:\n${bad.join('\n')}`);
}

/**
 * Sign up through the real form, then log in: sign-up answers a new and a taken email alike
 * (the login page with its notice), so it never signs anyone in by itself. Ends on Developer API.
 */
export async function signUp(
  p: Page,
  root: string,
  email: string,
  password = 'correct horse battery staple',
): Promise<void> {
  await p.goto(root + '/');
  await p.getByRole('link', { name: 'Sign up' }).first().click();
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign up' }).click();
  await p.waitForURL('**/login?signed_up=1');
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Log in' }).click();
  // Logging in lands on the overview; most tests start from Developer API, one click away.
  await p.waitForURL('**/overview');
  await p.goto(`${root}/settings/developer-api`);
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${Math.random().toString(36).slice(2, 10)}@example.test`;
}

/** One set of listeners and one browser for a describe block, both closed after it. */
export function dashboardHarness(overrides?: Parameters<typeof startApi>[0]): {
  api: Awaited<ReturnType<typeof startApi>>;
  browser: Browser;
} {
  const h = {} as { api: Awaited<ReturnType<typeof startApi>>; browser: Browser };
  beforeAll(async () => {
    h.api = await startApi(overrides);
    h.browser = await launchBrowser();
  });
  afterAll(async () => {
    await h.browser?.close();
    await h.api?.close();
  });
  return h;
}
