import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../api/dashboard/session';
import { createSession, deleteSession } from '../../db/dashboard-users';
import { startApi } from '../helpers/api';
import { testDb } from '../helpers/db';
import { makeTenant } from '../helpers/factories';

/**
 * The dashboard host's `/`: a person not signed in gets the public page with "Log in" and
 * "Sign up"; a person signed in is sent on to their overview (they have nothing to do on a
 * page offering to log in); once the session is gone, `/` is the public page again.
 */
describe('the dashboard front page', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let token: string;
  const home = (cookie?: string) =>
    fetch(`${api.dashboardRoot}/`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

  beforeAll(async () => {
    api = await startApi();
    const t = await makeTenant('home');
    const [user] = await testDb()('dashboard_users')
      .insert({
        tenant_id: t.tenant_id,
        email: `home-${crypto.randomUUID()}@example.com`,
        role: 'owner',
        password_hash: 'x',
      })
      .returning(['id', 'tenant_id', 'email', 'role']);
    token = (await createSession(testDb(), user)).token;
  });
  afterAll(() => api?.close());

  it('shows a person not signed in the public page with "Log in" and "Sign up"', async () => {
    for (const cookie of [undefined, `${SESSION_COOKIE}=not-a-session`]) {
      const r = await home(cookie);
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(text).toContain('<a href="/login">Log in</a>');
      expect(text).toContain('<a href="/signup">Sign up</a>');
    }
  });

  it('sends a signed-in person to the overview, and shows the public page once the session is gone', async () => {
    const r = await home(`${SESSION_COOKIE}=${token}`);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/overview');
    const overview = await fetch(`${api.dashboardRoot}/overview`, {
      redirect: 'manual',
      headers: { cookie: `${SESSION_COOKIE}=${token}` },
    });
    expect(overview.status).toBe(200);

    await deleteSession(testDb(), token);
    const after = await home(`${SESSION_COOKIE}=${token}`);
    expect(after.status).toBe(200);
    expect(await after.text()).toContain('<a href="/login">Log in</a>');
  });
});
