import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../domain/scopes';
import { NOTES_PER_CUSTOMER } from '../../operations/customer-notes/create';
import { assertMatchesOpenApi, call, keyWith, newTenant, startApi } from '../helpers/api';
import { testDb } from '../helpers/db';

/**
 * The support desk's notes on a customer (docs/support.md, "Notes"): written and read back newest
 * first, audited by name without the text, bounded per customer, held to their scopes and to the
 * tenant that wrote them.
 */
describe('customer notes over REST', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let writer: string;
  let reader: string;
  const notes = (u: string) => `/customers/${encodeURIComponent(u)}/notes`;
  const write = async (u: string, body: unknown, key = writer) => {
    const r = await call(api.apiUrl, notes(u), key, { method: 'POST', body: JSON.stringify(body) });
    if (r.status < 500) assertMatchesOpenApi('POST', '/customers/{app_user_id}/notes', r);
    return r;
  };

  beforeAll(async () => {
    api = await startApi();
    t = await newTenant('notes');
    writer = (await keyWith(t.tenant_id, ['customers:write'])).secret_key;
    reader = (await keyWith(t.tenant_id, ['customers:read'])).secret_key;
  });
  afterAll(async () => {
    await api.close();
  });

  it('writes a note and lists the app user’s notes newest first; the customer page then exists', async () => {
    const u = 'wrote in: no purchase yet';
    expect((await call(api.apiUrl, `/customers/${encodeURIComponent(u)}`, reader)).status).toBe(404);
    const first = await write(u, { body: 'Asked why premium did not unlock after paying.' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ object: 'customer_note', app_user_id: u, written_by: expect.any(String) });
    const second = await write(u, { body: '  Receipt found; granted a week.  ' });
    expect(second.body.body).toBe('Receipt found; granted a week.');
    const list = await call(api.apiUrl, `${notes(u)}?limit=1`, reader);
    assertMatchesOpenApi('GET', '/customers/{app_user_id}/notes', list);
    expect(list.body.data.map((n: { id: string }) => n.id)).toEqual([second.body.id]);
    expect(list.body.pagination).toMatchObject({ total: 2, has_more: true });
    expect((await call(api.apiUrl, `/customers/${encodeURIComponent(u)}`, reader)).status).toBe(200);
  });

  it('audits the write by its name and the key, never the text', async () => {
    const r = await write('audited_user', { body: 'private words about a person' });
    const rows = await testDb()('audit_entries').where({ tenant_id: t.tenant_id, action: 'customer_notes.create' });
    const mine = rows.find((a) => (a.detail as { id?: string } | null)?.id === r.body.id);
    expect(mine).toMatchObject({ outcome: 'ok', actor_type: 'api_key' });
    expect(JSON.stringify(rows)).not.toContain('private words');
  });

  it('refuses an empty or too long note naming body, and an unknown field', async () => {
    for (const body of [{ body: '   ' }, { body: 'x'.repeat(2001) }, {}]) {
      const r = await write('bad_input', body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_request', param: 'body' });
    }
    const extra = await write('bad_input', { body: 'ok', pinned: true });
    expect(extra.status).toBe(400);
    expect((await call(api.apiUrl, notes('bad_input'), reader)).status).toBe(404);
  });

  it(`keeps at most ${NOTES_PER_CUSTOMER} notes per app user: the next is 409 limit_reached and nothing is written`, async () => {
    const u = 'chatty_user';
    await testDb()('customer_notes').insert(
      Array.from({ length: NOTES_PER_CUSTOMER }, (_, i) => ({
        tenant_id: t.tenant_id,
        app_user_id: u,
        body: `n${i}`,
        written_by: 'operator',
      })),
    );
    const r = await write(u, { body: 'one more' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'limit_reached' });
    expect((await call(api.apiUrl, `${notes(u)}?limit=1`, reader)).body.pagination.total).toBe(NOTES_PER_CUSTOMER);
    expect((await write('another_user', { body: 'others are not capped by it' })).status).toBe(201);
  });

  it('writing needs customers:write and reading customers:read', async () => {
    const noWrite = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'customers:write') as Scope[]);
    const w = await write('scoped_user', { body: 'x' }, noWrite.secret_key);
    expect(w.status).toBe(403);
    expect(w.body).toMatchObject({ error: 'insufficient_scope' });
    const noRead = await keyWith(t.tenant_id, SCOPES.filter((s) => s !== 'customers:read') as Scope[]);
    expect((await call(api.apiUrl, notes('scoped_user'), noRead.secret_key)).status).toBe(403);
  });

  it('another tenant neither reads nor is shown the notes, and writes its own apart', async () => {
    const u = 'shared_name';
    await write(u, { body: 'tenant A only' });
    const b = await newTenant('notes-b');
    const bKey = (await keyWith(b.tenant_id, ['customers:read', 'customers:write'])).secret_key;
    const seen = await call(api.apiUrl, notes(u), bKey);
    expect([seen.status, seen.body.error]).toEqual([404, 'not_found']);
    expect((await call(api.apiUrl, `/customers/${encodeURIComponent(u)}`, bKey)).status).toBe(404);
    expect((await write(u, { body: 'tenant B' }, bKey)).status).toBe(201);
    const a = await call(api.apiUrl, notes(u), reader);
    expect(a.body.data.map((n: { body: string }) => n.body)).toEqual(['tenant A only']);
  });
});
