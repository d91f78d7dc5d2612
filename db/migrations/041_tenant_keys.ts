import type { Knex } from 'knex';

/**
 * Two keys that did not carry the tenant now do (every durable identity carries it):
 *
 * - `import_items`: keyed by (tenant_id, import_id, line), and its import named as
 *   (tenant_id, import_id), so a line can only belong to an import of its own tenant (`imports`
 *   gets the unique (tenant_id, id) that reference needs; the table is small, one row per import).
 * - `team_invitations`: a token hash is unique per tenant, (tenant_id, token_hash). The accept
 *   flow starts before the visitor has a tenant, so `team_invitation_tenant(hash)` still looks a
 *   hash up across tenants (a plain index on the hash serves it), and now answers a tenant only
 *   when exactly one live invitation holds that hash: were two tenants' links ever to share one,
 *   neither visitor is let into a tenant by a guess which of the two it meant.
 *
 * Row-level security is unchanged (both tables keep their tenant policies).
 */
async function searchPath(knex: Knex): Promise<string> {
  const schema = (await knex.raw('select current_schema() as s')).rows[0].s as string;
  return `set search_path = "${schema.replace(/"/g, '""')}", pg_temp`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table imports add constraint imports_tenant_id_id_key unique (tenant_id, id)');
  await knex.raw('alter table import_items drop constraint import_items_import_id_fkey');
  await knex.raw('alter table import_items drop constraint import_items_pkey');
  await knex.raw('alter table import_items add constraint import_items_pkey primary key (tenant_id, import_id, line)');
  await knex.raw(`alter table import_items add constraint import_items_import_fkey
    foreign key (tenant_id, import_id) references imports (tenant_id, id) on delete cascade`);

  await knex.raw('alter table team_invitations drop constraint team_invitations_token_hash_unique');
  await knex.raw(
    'alter table team_invitations add constraint team_invitations_tenant_token_hash_key unique (tenant_id, token_hash)',
  );
  await knex.raw('create index team_invitations_token_hash on team_invitations (token_hash)');
  await knex.raw(`create or replace function team_invitation_tenant(p_hash text) returns uuid
    language sql stable security definer ${await searchPath(knex)} as $fn$
      select (array_agg(i.tenant_id))[1] from team_invitations i
       where i.token_hash = p_hash and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()
      having count(*) = 1
    $fn$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create or replace function team_invitation_tenant(p_hash text) returns uuid
    language sql stable security definer ${await searchPath(knex)} as $fn$
      select i.tenant_id from team_invitations i
       where i.token_hash = p_hash and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()
    $fn$`);
  await knex.raw('drop index if exists team_invitations_token_hash');
  await knex.raw('alter table team_invitations drop constraint team_invitations_tenant_token_hash_key');
  await knex.raw('alter table team_invitations add constraint team_invitations_token_hash_unique unique (token_hash)');
  await knex.raw('alter table import_items drop constraint import_items_import_fkey');
  await knex.raw('alter table import_items drop constraint import_items_pkey');
  await knex.raw('alter table import_items add constraint import_items_pkey primary key (import_id, line)');
  await knex.raw(`alter table import_items add constraint import_items_import_id_fkey
    foreign key (import_id) references imports (id) on delete cascade`);
  await knex.raw('alter table imports drop constraint imports_tenant_id_id_key');
}
