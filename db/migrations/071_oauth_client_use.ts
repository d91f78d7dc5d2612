import type { Knex } from 'knex';

/**
 * Client registrations that nobody uses are deleted (docs/assistant-sign-in.md, "Expired records").
 *
 * - `oauth_records.used_at`: on a client registration, when a record naming it (a pending
 *   sign-in, a code, a token, a grant) was last written; null while it never was. A registration
 *   has no expiry of its own, so this is what tells an abandoned one from a working one. Existing
 *   registrations count as used at the latest record that names them, or never.
 * - `oauth_records_client_ref`: the client a record names, as the authorization server stores it
 *   (`clientId` in a code's, token's or grant's payload; `params.client_id` in a pending
 *   sign-in's). The cleanup asks it for live records of each candidate registration.
 * - `oauth_records_client_unused` and `oauth_records_client_used`: the registrations never used,
 *   oldest first, and the used ones, least recently used first: the cleanup's two candidate lists.
 */
const CLIENT_REF = `coalesce(payload->>'clientId', payload->'params'->>'client_id')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table oauth_records add column used_at timestamptz');
  await knex.raw(`create index oauth_records_client_ref on oauth_records ((${CLIENT_REF})) where model <> 'Client'`);
  await knex.raw(
    `create index oauth_records_client_unused on oauth_records (created_at) where model = 'Client' and used_at is null`,
  );
  await knex.raw(`create index oauth_records_client_used on oauth_records (used_at) where model = 'Client'`);
  await knex.raw(`update oauth_records c set used_at = r.last
    from (select ${CLIENT_REF} as client_id, max(created_at) as last from oauth_records
          where model not in ('Client', 'RegistrationAccessToken') group by 1) r
    where c.model = 'Client' and r.client_id = c.payload->>'client_id'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index oauth_records_client_used');
  await knex.raw('drop index oauth_records_client_unused');
  await knex.raw('drop index oauth_records_client_ref');
  await knex.raw('alter table oauth_records drop column used_at');
}
