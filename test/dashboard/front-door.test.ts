import crypto from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenFor, SESSION_COOKIE } from '../../api/dashboard/session';
import { addUserToTenant, createSession, signUpUser, type DashboardUser } from '../../db/dashboard-users';
import { setMemberRole } from '../../db/team';
import { withTenant } from '../../db/tenant-tx';
import { listAppKeys } from '../../db/apps';
import { call, keyWith, refill, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';

/**
 * The dashboard's front door (issue 42, item 3; item 1's dashboard share): every router matches a
 * path exactly as written, so a change of letter case or a trailing slash reaches no page past the
 * page gate; a request without a signed-in person is refused before any page code; a form post is
 * refused for its session and its origin before its body is read, and a multipart post for its
 * token as soon as the token's part has arrived; a dashboard form spends the tenant's bucket that
 * REST and the tools spend.
 */

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * Sends a request's head and the first bytes of a body announced as `length` bytes, and never the
 * rest: resolves with the answer, which can only come from a server that decided without the body.
 * Rejects when no answer came within `ms` (the body still unsent, the server still waiting for it).
 */
function answerBeforeBodyEnds(
  url: string,
  o: { method?: string; headers?: Record<string, string>; first: string | Buffer; length: number },
  ms = 10_000,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: o.method ?? 'POST',
      headers: { ...o.headers, 'content-length': String(o.length) },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to ${url} within ${ms} ms while its body was unfinished`));
    }, ms);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.write(o.first);
  });
}

const BOUNDARY = '----front-door-test';
const LARGE = 3 * 1024 * 1024 + 512 * 1024;
/** The start of a multipart body: the named fields, then a file part whose bytes never end. */
const multipartStart = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('') +
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n` +
  'original_transaction_id,app_user_id\n'.padEnd(64 * 1024, 'x');
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

describe('dashboard front door', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let owner: DashboardUser;
  let ownerCookie: string;
  let ownerCsrf: string;
  let viewerCookie: string;
  let secretKey: string;
  let publishableKey: string;

  const get = (path: string, cookie?: string) =>
    fetch(api.dashboardRoot + path, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(api.dashboardRoot + path, {
      method: 'POST',
      headers: { cookie: ownerCookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form),
      redirect: 'manual',
    });
  const imports = async () =>
    Number((await testDb()('imports').where({ tenant_id: owner.tenant_id }).count('* as n'))[0].n);

  beforeAll(async () => {
    api = await startApi();
    const db = testDb();
    owner = await signUpUser(db, { email: `door-owner-${crypto.randomUUID()}@example.com`, passwordHash: 'unused' });
    const viewer = await addUserToTenant(db, {
      tenantId: owner.tenant_id,
      email: `door-viewer-${crypto.randomUUID()}@example.com`,
      passwordHash: 'unused',
    });
    await withTenant(db, owner.tenant_id, (trx) => setMemberRole(trx, viewer.id, 'viewer'));
    const o = await createSession(db, owner);
    ownerCookie = `${SESSION_COOKIE}=${o.token}`;
    ownerCsrf = csrfTokenFor(o.token);
    viewerCookie = `${SESSION_COOKIE}=${(await createSession(db, { ...viewer, role: 'viewer' })).token}`;
    secretKey = (await keyWith(owner.tenant_id, ['products:read', 'products:write'])).secret_key;
    publishableKey = (await withTenant(db, owner.tenant_id, (trx) => listAppKeys(trx)))[0].publishable_key_test;
  });
  afterAll(() => api?.close());

  describe('paths match exactly as written, on every router', () => {
    it('a viewer reaches neither the team, the keys nor the providers page by changing letter case', async () => {
      for (const path of ['/Settings/Team', '/Settings/Developer-API', '/Providers', '/SETTINGS/team']) {
        const r = await get(path, viewerCookie);
        const text = await r.text();
        expect([path, r.status]).toEqual([path, 404]);
        expect(text).not.toContain(owner.email);
        expect(text).not.toContain('pk_');
      }
      // The pages themselves, as written: refused by the gate for this role.
      for (const path of ['/settings/team', '/settings/developer-api', '/providers'])
        expect([path, (await get(path, viewerCookie)).status]).toEqual([path, 403]);
    });

    it('a trailing slash is another path: no page, so no way around a pattern that ends at the path', async () => {
      for (const path of ['/settings/team/', '/products/new/', '/overview/', '/providers/'])
        expect([path, (await get(path, viewerCookie)).status]).toEqual([path, 404]);
      // The owner opens each page at its own path.
      for (const path of ['/settings/team', '/products/new', '/overview', '/providers'])
        expect([path, (await get(path, ownerCookie)).status]).toEqual([path, 200]);
    });

    it('anonymously, /Overview is no page (404), never page code without a person (a 500)', async () => {
      const r = await get('/Overview');
      expect(r.status).toBe(404);
      const page = await get('/overview');
      expect(page.status).toBe(302);
      expect(page.headers.get('location')).toBe('/login?next=%2Foverview');
    });

    it('the management API and the client endpoints match letter case and slashes exactly', async () => {
      const ok = await call(api.apiRoot, '/v1/products', secretKey);
      expect(ok.status).toBe(200);
      for (const [root, path] of [
        [api.apiRoot, '/v1/Products'],
        [api.apiRoot, '/v1/products/'],
        [api.dashboardRoot, '/v1/PRODUCTS'],
        [api.dashboardRoot, '/v1/products/'],
      ]) {
        const r = await call(root, path, secretKey);
        expect([path, r.status, r.body?.error]).toEqual([path, 404, 'not_found']);
      }
      expect((await call(api.apiRoot, '/V1/products', secretKey)).status).toBe(404);
      expect((await call(api.apiRoot, '/v1/sdk/subscribers/door-user', publishableKey)).status).toBe(200);
      const sdk = await call(api.apiRoot, '/v1/sdk/Subscribers/door-user', publishableKey);
      expect([sdk.status, sdk.body.error]).toEqual([404, 'not_found']);
      // Not the client endpoints' prefix: the management API's, which finds no route for it.
      const upper = await call(api.apiRoot, '/v1/SDK/subscribers/door-user', secretKey);
      expect([upper.status, upper.body.error]).toEqual([404, 'not_found']);
      // The webhook receivers and the tool server compare their paths as written too.
      const hook = await fetch(`${api.dashboardRoot}/API/webhooks/psp_a`, { method: 'POST', body: '{}' });
      expect(hook.status).toBe(404);
      const tools = await fetch(`${api.toolsUrl}/mcp/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(tools.status).toBe(404);
    });
  });

  describe('no person, no page code', () => {
    it('every signed-in page sends a visitor to log in (GET) or refuses the form (401) before anything runs', async () => {
      const paths = [
        '/overview',
        '/charts/mrr',
        '/charts/mrr/csv',
        '/settings/team',
        '/settings/developer-api',
        '/providers/psp_a/oauth/callback',
        '/products/new',
        '/customers/someone',
        '/imports/00000000-0000-0000-0000-000000000000',
        '/changes',
        '/subscribers',
        '/webhook-endpoints',
      ];
      for (const path of paths) {
        const r = await get(path);
        expect([path, r.status, r.headers.get('location')]).toEqual([
          path,
          302,
          `/login?next=${encodeURIComponent(path)}`,
        ]);
      }
      for (const path of ['/products', '/paywall', '/imports/provider', '/settings/team/invitations']) {
        const r = await fetch(api.dashboardRoot + path, { method: 'POST', body: new URLSearchParams({}) });
        expect([path, r.status]).toEqual([path, 401]);
      }
    });
  });

  describe('refused before the body is read', () => {
    it('an anonymous upload is answered at once, whatever letter case, its 3.5 MiB body never sent', async () => {
      const before = await imports();
      for (const [path, status] of [
        ['/Imports/file', 404],
        ['/imports/file', 401],
        ['/IMPORTS/FILE', 404],
      ] as const) {
        const r = await answerBeforeBodyEnds(api.dashboardRoot + path, {
          headers: MULTIPART,
          first: multipartStart({ _csrf: 'anything', format: 'store_ios' }),
          length: LARGE,
        });
        expect([path, r.status]).toEqual([path, status]);
      }
      expect(await imports()).toBe(before);
    });

    it("a signed-in person's upload from another site is refused (403) before its body is read", async () => {
      const before = await imports();
      for (const headers of [
        { origin: 'https://evil.example' } as Record<string, string>,
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site', origin: api.dashboardRoot },
        { 'sec-fetch-site': 'same-site' },
      ]) {
        const r = await answerBeforeBodyEnds(api.dashboardRoot + '/imports/file', {
          headers: { ...MULTIPART, cookie: ownerCookie, ...headers },
          first: multipartStart({ _csrf: ownerCsrf, format: 'store_ios' }),
          length: LARGE,
        });
        expect([headers, r.status]).toEqual([headers, 403]);
        expect(r.text).toContain('Request refused');
      }
      // An urlencoded form alike.
      const r = await answerBeforeBodyEnds(api.dashboardRoot + '/products', {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: ownerCookie,
          origin: 'https://evil.example',
        },
        first: `_csrf=${ownerCsrf}&sku=`,
        length: 60 * 1024,
      });
      expect(r.status).toBe(403);
      expect(await imports()).toBe(before);
    });

    it('an upload whose first part is not its security token is refused as that part arrives', async () => {
      const before = await imports();
      for (const fields of [{ format: 'store_ios', _csrf: ownerCsrf }, { _csrf: 'not-the-token' }, {}] as Record<
        string,
        string
      >[]) {
        const r = await answerBeforeBodyEnds(api.dashboardRoot + '/imports/file', {
          headers: { ...MULTIPART, cookie: ownerCookie, origin: api.dashboardRoot },
          first: multipartStart(fields),
          length: LARGE,
        });
        expect([fields, r.status]).toEqual([fields, 403]);
        expect(r.text).toContain('security token');
      }
      expect(await imports()).toBe(before);
    });

    it('a same-origin upload with its token first is read and answered as before', async () => {
      const body =
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${ownerCsrf}\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="format"\r\n\r\nstore_ios\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n` +
        `not,the,header\n\r\n--${BOUNDARY}--\r\n`;
      const r = await fetch(api.dashboardRoot + '/imports/file', {
        method: 'POST',
        headers: { ...MULTIPART, cookie: ownerCookie, origin: api.dashboardRoot, 'sec-fetch-site': 'same-origin' },
        body,
        redirect: 'manual',
      });
      // The operation judged the file (the header is wrong): the form came back with its error.
      expect(r.status).toBe(400);
      expect(await r.text()).toContain('role="alert"');
    });
  });

  describe("dashboard forms spend the tenant's bucket", () => {
    const productForm = (sku: string) => ({ _csrf: ownerCsrf, sku, name: sku, type: 'subscription', tier: 'monthly' });
    const bucketEmptyByRest = async () => {
      for (let i = 0; i < 400; i++) if ((await call(api.apiRoot, '/v1/products', secretKey)).status === 429) return;
      throw new Error('REST calls never emptied the bucket');
    };

    it('a form whose tenant emptied its bucket through REST answers 429 rate_limited as its error, writing nothing', async () => {
      await refill(owner.tenant_id);
      // The bucket refills a token a second: on a busy machine the form may arrive after one came
      // back and be served (302, a product written under a SKU of its own), so empty it again.
      let sku = '';
      let r: Response | undefined;
      for (let attempt = 0; attempt < 5 && r?.status !== 429; attempt++) {
        await bucketEmptyByRest();
        sku = `door_${crypto.randomUUID().slice(0, 8)}`;
        r = await post('/products', productForm(sku));
        if (r.status !== 429) expect(r.status).toBe(302);
      }
      r = r!;
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      const text = await r.text();
      expect(text).toMatch(/<p class="error" role="alert">Rate limit of 120 requests/);
      expect(await testDb()('products').where({ tenant_id: owner.tenant_id, sku }).first()).toBeUndefined();
      await refill(owner.tenant_id);
      expect((await post('/products', productForm(sku))).status).toBe(302);
      expect(await testDb()('products').where({ tenant_id: owner.tenant_id, sku }).first()).toBeDefined();
    });

    it('form posts spend the same bucket: once they have emptied it, REST is refused 429', async () => {
      await refill(owner.tenant_id);
      let refusedAt = -1;
      for (let i = 0; i < 400 && refusedAt < 0; i++) {
        // An empty SKU: refused by the operation (400), after its token was spent, as a REST write.
        const r = await post('/products', productForm(''));
        if (r.status === 429) refusedAt = i;
        else expect(r.status).toBe(400);
      }
      expect(refusedAt).toBeGreaterThanOrEqual(100);
      // As above: a token that came back meanwhile serves one REST call; the next form empties it again.
      let rest = await call(api.apiRoot, '/v1/products', secretKey);
      for (let attempt = 0; attempt < 5 && rest.status !== 429; attempt++) {
        expect(rest.status).toBe(200);
        for (let i = 0; i < 10 && (await post('/products', productForm(''))).status !== 429; i++);
        rest = await call(api.apiRoot, '/v1/products', secretKey);
      }
      expect(rest.status).toBe(429);
      expect(rest.body.error).toBe('rate_limited');
      await refill(owner.tenant_id);
    });
  });
});
