import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/db';
import { dashboardHarness, expectAccessible, signUp, uniqueEmail } from './helpers/browser';

/**
 * Settings → Exports (docs/exports.md, "Scheduled exports to your bucket"): a person sets the
 * destination through the form, the one way its credentials come in; they are sealed and never
 * shown back; a bad field is the operation's own error on the form, and nothing is written.
 */
describe('dashboard: the export destination', () => {
  const h = dashboardHarness();

  it('saves the destination with sealed credentials; a bad endpoint is refused on the form', async () => {
    const ctx = await h.browser.newContext();
    const p = await ctx.newPage();
    const email = uniqueEmail('exports');
    await signUp(p, h.api.dashboardRoot, email);
    const tenantId = (await testDb()('dashboard_users').where({ email }).first()).tenant_id as string;
    const secret = `secret-${Math.random().toString(36).slice(2)}`;

    await p.goto(`${h.api.dashboardRoot}/settings/exports`);
    await p.getByText('Not set: nothing is exported on a schedule.').waitFor();
    await expectAccessible(p, 'export settings');
    const fill = async (endpoint: string) => {
      await p.getByLabel('Endpoint', { exact: true }).fill(endpoint);
      await p.getByLabel('Region', { exact: true }).fill('eu-west-1');
      await p.getByLabel('Bucket', { exact: true }).fill('acme-exports');
      await p.getByLabel(/Folder in the bucket/).fill('billing');
      await p.getByLabel(/^Access key id/).fill('AKIAEXAMPLE');
      await p.getByLabel(/^Secret access key/).fill(secret);
      await p.getByRole('button', { name: 'Save' }).click();
    };
    await fill('https://storage.example/with/a/path');
    await p.getByText(/no path, query or fragment/).waitFor();
    expect(await testDb()('export_destinations').where({ tenant_id: tenantId })).toHaveLength(0);

    await fill('https://storage.example');
    await p.getByText('Saved.').waitFor();
    await p.getByText(/Status: active/).waitFor();
    const row = await testDb()('export_destinations').where({ tenant_id: tenantId }).first();
    expect(row).toMatchObject({ endpoint: 'https://storage.example', bucket: 'acme-exports', prefix: 'billing/' });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain('AKIAEXAMPLE');
    // Never shown back, not even in the form's fields.
    expect(await p.content()).not.toContain(secret);
    expect(await p.getByLabel(/^Secret access key/).inputValue()).toBe('');
    await ctx.close();
    // Nothing of this file for a scheduled run to try (the run's database is shared by every file).
    await testDb()('export_destinations').where({ tenant_id: tenantId }).delete();
  });
});
