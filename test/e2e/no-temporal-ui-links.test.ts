import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { outboundWorkflowId } from '../../temporal/workflow-starts';
import { testDb } from '../helpers/db';
import { signUp, uniqueEmail, dashboardHarness } from './helpers/browser';

/**
 * The Temporal UI is the operator's, and shows every tenant's workflows: no tenant-facing page
 * links to it (issue #28). Where a page names a workflow, it names it as text, which is what an
 * operator looks up (docs/operations.md).
 */
describe('dashboard pages name workflows but never link to the Temporal UI', () => {
  const h = dashboardHarness();

  /** Every link on the page pointing off the dashboard, or at a Temporal UI path. */
  const outsideLinks = (p: Page) =>
    p
      .locator('a[href]')
      .evaluateAll(
        (as, root) =>
          (as as HTMLAnchorElement[])
            .map((a) => a.href)
            .filter((href) => !href.startsWith(root as string) || href.includes('/namespaces/')),
        h.api.dashboardRoot,
      );

  it('overview, sync runs and a webhook endpoint show the workflow id as text and no Temporal UI link', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('no-temporal-links');
    await signUp(p, h.api.dashboardRoot, email);
    const db = testDb();
    const { tenant_id } = await db('dashboard_users').where({ email }).first();
    const runId = crypto.randomUUID();
    const workflowId = `sync-${tenant_id}-${runId}`;
    await db('sync_runs').insert({
      id: runId,
      tenant_id,
      status: 'succeeded',
      requested_by: 'test',
      workflow_id: workflowId,
      finished_at: new Date(),
    });
    const [endpoint] = await db('webhook_endpoints')
      .insert({ tenant_id, url: 'https://receiver.example/hook', secret_enc: 'unused', task_queue: 'unused' })
      .returning('id');

    for (const path of ['/overview', '/sync-runs']) {
      expect((await p.goto(h.api.dashboardRoot + path))!.status(), path).toBe(200);
      await expect(p.locator('main').textContent(), path).resolves.toContain(workflowId);
      await expect(outsideLinks(p), path).resolves.toEqual([]);
      expect(await p.content(), path).not.toMatch(/Temporal UI|:8233/);
    }
    expect((await p.goto(`${h.api.dashboardRoot}/webhook-endpoints/${endpoint.id}`))!.status()).toBe(200);
    await expect(p.locator('main').textContent()).resolves.toContain(outboundWorkflowId(tenant_id, endpoint.id));
    await expect(outsideLinks(p)).resolves.toEqual([]);
    expect(await p.content()).not.toMatch(/Temporal UI|:8233/);
    await ctx.close();
  });
});
