import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashInvitationToken, invitationTenant, findLiveInvitation } from '../../db/team';
import { withTenant } from '../../db/tenant-tx';
import { createTenant } from '../../db/tenants';
import { appDb, testDb } from '../helpers/db';

/**
 * Every durable identity carries the tenant: an import's lines and an invitation's token hash
 * are unique per tenant, and a line can only name an import of its own tenant (migration of the
 * two keys). The pre-tenant lookup of an invitation link still finds its tenant, as the login
 * role the dashboard uses before anyone is signed in.
 */
const tenant = async (tag: string) =>
  (await createTenant(testDb(), { name: `keys-${tag}-${crypto.randomUUID()}` })).tenant_id;

/** The columns of each primary and unique key of a table, as `a,b` strings. */
async function keysOf(table: string): Promise<string[]> {
  const { rows } = await testDb().raw(
    `select string_agg(a.attname, ',' order by k.ord) as cols
       from pg_constraint c
       cross join lateral unnest(c.conkey) with ordinality k(attnum, ord)
       join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
      where c.conrelid = ?::regclass and c.contype in ('p', 'u')
      group by c.oid order by 1`,
    [table],
  );
  return rows.map((r: { cols: string }) => r.cols);
}

const invitation = (tenantId: string, token: string, extra: Record<string, unknown> = {}) =>
  testDb()('team_invitations').insert({
    tenant_id: tenantId,
    email: `invitee-${crypto.randomUUID()}@example.test`,
    role: 'viewer',
    token_hash: hashInvitationToken(token),
    expires_at: new Date(Date.now() + 3_600_000),
    ...extra,
  });

describe('keys that carry the tenant', () => {
  it('import lines are keyed (tenant, import, line) and an invitation’s token hash (tenant, hash); neither is unique without the tenant', async () => {
    expect(await keysOf('import_items')).toEqual(['tenant_id,import_id,line']);
    expect(await keysOf('team_invitations')).toEqual(['id', 'tenant_id,token_hash']);
  });

  it('a line can only name an import of its own tenant', async () => {
    const [a, b] = [await tenant('a'), await tenant('b')];
    const [imp] = await testDb()('imports').insert({ tenant_id: a, source: 'file' }).returning('id');
    const line = (tenantId: string, n: number) =>
      testDb()('import_items').insert({ tenant_id: tenantId, import_id: imp.id, line: n, provider: 'psp_a', ref: 'x' });
    await line(a, 1);
    await expect(line(b, 2)).rejects.toMatchObject({ code: '23503' });
    await expect(line(a, 1)).rejects.toMatchObject({ code: '23505' });
    // Deleting the import still takes its lines.
    await testDb()('imports').where({ id: imp.id }).del();
    expect(await testDb()('import_items').where({ import_id: imp.id })).toEqual([]);
  });

  it('the link’s pre-tenant lookup finds the one live invitation holding a hash; a hash held in two tenants lets nobody in by a guess', async () => {
    const [a, b] = [await tenant('inv-a'), await tenant('inv-b')];
    const token = crypto.randomBytes(24).toString('base64url');
    await invitation(a, token);
    // As the login role, with no tenant set: what the dashboard's accept page runs.
    expect(await invitationTenant(appDb(), token)).toBe(a);
    expect(await invitationTenant(appDb(), `${token}x`)).toBeUndefined();
    // Within one tenant a hash is unique…
    await expect(invitation(a, token)).rejects.toMatchObject({ code: '23505' });
    // …across tenants it is not a key any more: another tenant's row neither collides nor is revealed by a conflict.
    await invitation(b, token);
    expect(await invitationTenant(appDb(), token)).toBeUndefined();
    // Each tenant's own transaction still sees only its own invitation for that token.
    for (const t of [a, b]) {
      const inv = await withTenant(appDb(), t, (trx) => findLiveInvitation(trx, token));
      const own = await testDb()('team_invitations')
        .where({ tenant_id: t, token_hash: hashInvitationToken(token) })
        .first('id');
      expect(inv?.id).toBe(own.id);
    }
    // Once one of them is no longer live, the other is found again.
    await testDb()('team_invitations')
      .where({ tenant_id: b, token_hash: hashInvitationToken(token) })
      .update({ revoked_at: new Date() });
    expect(await invitationTenant(appDb(), token)).toBe(a);
  });
});
