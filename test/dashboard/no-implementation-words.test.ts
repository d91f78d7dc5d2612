import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, signUpUser } from '../../db/dashboard-users';
import { hashPassword } from '../../runtime/passwords';
import { seedDemoTenant } from '../../seed/demo';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { startApi } from '../helpers/api';
import { testDb } from '../helpers/db';

/**
 * A tenant reads the dashboard as a business person: no page says how the service is built
 * (migration numbers, table names, the workflow engine's vocabulary). Every page a signed-in
 * person can open, filled with the demo's data, and the public ones, read as text.
 */
const WORDS = [
  /\bmigrations?\b/i,
  /\bworkflows?\b/i,
  /\btemporal\b/i,
  /\btask queues?\b/i,
  /\brollups?\b/i,
  /\boutbox\b/i,
  /\bpostgres(ql)?\b/i,
  /\bknex\b/i,
  /\brow-level security\b/i,
];

/** The page as its reader sees it: text only, without markup, scripts or attribute values. */
const visibleText = (page: string) =>
  page
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z#0-9]+;/g, ' ');

describe('tenant-facing pages', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let cookie: string;
  let tenantId: string;
  let tables: string[];
  const paths: string[] = [];

  beforeAll(async () => {
    api = await startApi();
    const db = testDb();
    const user = await signUpUser(db, {
      email: `words-${crypto.randomUUID()}@example.com`,
      passwordHash: await hashPassword('correct horse battery staple'),
    });
    tenantId = user.tenant_id;
    await seedDemoTenant(db, tenantId);
    const runId = crypto.randomUUID();
    await db('sync_runs').insert({
      id: runId,
      tenant_id: tenantId,
      status: 'succeeded',
      requested_by: 'test',
      workflow_id: `sync-${tenantId}-${runId}`,
      finished_at: new Date(),
    });
    const [endpoint] = await db('webhook_endpoints')
      .insert({ tenant_id: tenantId, url: 'https://receiver.example/hook', secret_enc: 'unused', task_queue: 'unused' })
      .returning('id');
    const product = await db('products').where({ tenant_id: tenantId }).first('id');
    const { token } = await createSession(db, user);
    cookie = `${SESSION_COOKIE}=${token}`;
    // Table names with an underscore: the plain ones (products, prices) are ordinary words.
    tables = (await db('information_schema.tables').where({ table_schema: 'public' }).select('table_name'))
      .map((r: { table_name: string }) => r.table_name)
      .filter((t) => t.includes('_') && !t.startsWith('knex_'));
    const home = await (await fetch(api.dashboardRoot + '/overview', { headers: { cookie } })).text();
    const nav = [...home.matchAll(/<nav[\s\S]*?<\/nav>/g)][0][0];
    paths.push(
      ...[...nav.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]),
      `/products/${product.id}`,
      `/webhook-endpoints/${endpoint.id}`,
      '/products/new',
    );
  });
  afterAll(() => api?.close());

  it('the header’s name takes a signed-in person to the overview, and anyone else to the front page', async () => {
    const signedIn = await (await fetch(api.dashboardRoot + '/products', { headers: { cookie } })).text();
    expect(/<header>[\s\S]*?<a href="([^"]*)">Billing service<\/a>/.exec(signedIn)?.[1]).toBe('/overview');
    const anonymous = await (await fetch(api.dashboardRoot + '/login')).text();
    expect(/<header>[\s\S]*?<a href="([^"]*)">Billing service<\/a>/.exec(anonymous)?.[1]).toBe('/');
  });

  it('no page names a migration, a table or the workflow engine', async () => {
    expect(paths.length).toBeGreaterThan(10);
    const found: string[] = [];
    for (const p of [...paths, '/', '/login', '/signup']) {
      const r = await fetch(api.dashboardRoot + p, {
        headers: { cookie: p === '/login' || p === '/signup' ? '' : cookie },
      });
      expect([p, r.status]).toEqual([p, 200]);
      const text = visibleText(await r.text());
      for (const w of WORDS) if (w.test(text)) found.push(`${p}: ${w.exec(text)![0]}`);
      for (const t of tables) if (new RegExp(`\\b${t}\\b`).test(text)) found.push(`${p}: ${t}`);
    }
    expect(found).toEqual([]);
  });

  it('the scan can fail: it finds the words in a page that has them', () => {
    const text = visibleText('<p>recorded since migration 019 in <code>subscription_changes</code></p>');
    expect(WORDS.some((w) => w.test(text))).toBe(true);
    expect(tables.some((t) => new RegExp(`\\b${t}\\b`).test(text))).toBe(true);
  });
});
