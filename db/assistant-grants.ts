import type { Knex } from 'knex';
import type { Role } from '../domain/roles';
import { withTenant } from './tenant-tx';

/**
 * The consents people gave assistants (docs/assistant-sign-in.md), a tenant table: one row per
 * consent, tied to the authorization server's grant (`grant_id`) whose codes and tokens live in
 * `oauth_records`.
 */
export interface AssistantGrantRow {
  id: string;
  tenant_id: string;
  user_id: string;
  grant_id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  role: Role;
  hold_writes: boolean;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Records a person's consent, in the caller's tenant transaction. */
export async function insertAssistantGrant(
  trx: Knex.Transaction,
  g: Pick<
    AssistantGrantRow,
    'tenant_id' | 'user_id' | 'grant_id' | 'client_id' | 'client_name' | 'redirect_host' | 'role' | 'hold_writes'
  >,
): Promise<AssistantGrantRow> {
  const [row] = await trx('assistant_grants').insert(g).returning('*');
  return row as AssistantGrantRow;
}

/**
 * What a presented token acts as, read with each request: the consent (live, not revoked) and the
 * person's current role — none when the person was removed, so their assistants stop at once.
 */
export async function assistantGrantForUse(
  db: Knex,
  tenantId: string,
  grantId: string,
): Promise<(AssistantGrantRow & { person_role: Role; person_email: string }) | undefined> {
  return withTenant(db, tenantId, async (trx) => {
    const row = await trx('assistant_grants as g')
      .join('dashboard_users as u', 'u.id', 'g.user_id')
      .where('g.grant_id', grantId)
      .whereNull('g.revoked_at')
      .whereNull('u.removed_at')
      .first('g.*', 'u.role as person_role', 'u.email as person_email');
    return row as (AssistantGrantRow & { person_role: Role; person_email: string }) | undefined;
  });
}

/**
 * The consent behind a held change, for its approval (the caller's tenant transaction): live, its
 * person still a member.
 */
export async function assistantForApproval(
  trx: Knex.Transaction,
  id: string,
): Promise<(AssistantGrantRow & { person_role: Role }) | undefined> {
  return trx('assistant_grants as g')
    .join('dashboard_users as u', 'u.id', 'g.user_id')
    .where('g.id', id)
    .whereNull('g.revoked_at')
    .whereNull('u.removed_at')
    .first('g.*', 'u.role as person_role');
}

/** "<assistant> on behalf of <person>" for every consent of the tenant (the Changes page names who asked). */
export async function assistantNames(trx: Knex.Transaction): Promise<Map<string, string>> {
  const rows: { id: string; client_name: string; email: string }[] = await trx('assistant_grants as g')
    .join('dashboard_users as u', 'u.id', 'g.user_id')
    .select('g.id', 'g.client_name', 'u.email');
  return new Map(rows.map((r) => [r.id, `${r.client_name} on behalf of ${r.email}`]));
}

/** Last use, written at most once a minute per consent and never awaited on the request path. */
export async function touchAssistantGrant(db: Knex, tenantId: string, id: string): Promise<void> {
  await withTenant(db, tenantId, (trx) =>
    trx('assistant_grants')
      .where({ id })
      .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', trx.raw("now() - interval '1 minute'")))
      .update({ last_used_at: trx.fn.now() }),
  );
}

/** A person's connected assistants, newest first (revoked ones included, marked), in their tenant transaction. */
export async function listAssistantGrants(trx: Knex.Transaction, userId: string): Promise<AssistantGrantRow[]> {
  return trx('assistant_grants').where({ user_id: userId }).orderBy('created_at', 'desc').limit(100);
}

/** A connected assistant with its person, as the team page lists them. */
export type MemberAssistantRow = AssistantGrantRow & { member_email: string; member_role: Role };

/**
 * Every member's live connected assistants (the team page, owners and admins), newest first, in
 * the tenant's transaction; a removed member's are not live (their person is gone).
 */
export async function listMemberAssistants(trx: Knex.Transaction): Promise<MemberAssistantRow[]> {
  return trx('assistant_grants as g')
    .join('dashboard_users as u', 'u.id', 'g.user_id')
    .whereNull('g.revoked_at')
    .whereNull('u.removed_at')
    .orderBy('g.created_at', 'desc')
    .limit(500)
    .select('g.*', 'u.email as member_email', 'u.role as member_role');
}

/** One member's consent with its person (for the team's disconnect, before it locks), or undefined. */
export async function memberAssistant(trx: Knex.Transaction, id: string): Promise<MemberAssistantRow | undefined> {
  return trx('assistant_grants as g')
    .join('dashboard_users as u', 'u.id', 'g.user_id')
    .where('g.id', id)
    .first('g.*', 'u.email as member_email', 'u.role as member_role');
}

/**
 * A consent, locked, and revoked if it was live: undefined when there is none (another tenant's
 * under RLS, or with `userId` another person's); `revokedNow` false when it was revoked before.
 */
export async function revokeAssistantGrant(
  trx: Knex.Transaction,
  userId: string | undefined,
  id: string,
): Promise<{ row: AssistantGrantRow; revokedNow: boolean } | undefined> {
  const found = (await trx('assistant_grants')
    .where(userId === undefined ? { id } : { id, user_id: userId })
    .forUpdate()
    .first()) as AssistantGrantRow | undefined;
  if (!found) return undefined;
  if (found.revoked_at) return { row: found, revokedNow: false };
  const [row] = await trx('assistant_grants').where({ id }).update({ revoked_at: trx.fn.now() }).returning('*');
  return { row: row as AssistantGrantRow, revokedNow: true };
}
