import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import {
  ConnectionError,
  findConnectionByAccount,
  listConnectionsSafe,
  recordProofFailure,
  setDefault,
  type ConnectionErrorCode,
} from '../../db/connections';
import { attachToApp, connectionForApp } from '../../db/app-providers';
import {
  connectProvenByOAuth,
  createConnection,
  loadCredential,
  loadWebhookSecret,
  markConnectionProven,
  updateConnectionSecrets,
} from '../../db/connection-service';
import { withTenant } from '../../db/tenant-tx';
import { createVault, generateMasterKey, VaultDecryptError } from '../../vault/vault';
import { testDb } from '../helpers/db';

async function expectConnectionError(p: Promise<unknown>, code: ConnectionErrorCode): Promise<ConnectionError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConnectionError);
  expect((e as ConnectionError).code).toBe(code);
  return e as ConnectionError;
}

describe('provider connections', () => {
  const db = testDb();
  const vault = createVault(generateMasterKey());
  const tag = crypto.randomUUID().slice(0, 8);
  // Every secret this file stores: none may show up anywhere but inside the vault.
  const secrets: string[] = [];
  const secret = (prefix: string) => {
    const s = `${prefix}_${tag}_${crypto.randomBytes(12).toString('hex')}`;
    secrets.push(s);
    return s;
  };
  let a: string;
  let b: string;
  let appA: string;
  let appA2: string;
  let appB: string;
  const asA = <T>(work: (trx: Knex.Transaction) => Promise<T>) => withTenant(db, a, work);
  const asB = <T>(work: (trx: Knex.Transaction) => Promise<T>) => withTenant(db, b, work);

  async function app(tenantId: string, name: string): Promise<string> {
    const [row] = await db('apps')
      .insert({
        tenant_id: tenantId,
        name,
        publishable_key_test: `pk_test_${name}_${tag}`,
        publishable_key_live: `pk_live_${name}_${tag}`,
      })
      .returning('id');
    return row.id;
  }

  beforeAll(async () => {
    [{ id: a }] = await db('tenants')
      .insert({ name: `conn-A-${tag}` })
      .returning('id');
    [{ id: b }] = await db('tenants')
      .insert({ name: `conn-B-${tag}` })
      .returning('id');
    appA = await app(a, 'a1');
    appA2 = await app(a, 'a2');
    appB = await app(b, 'b1');
  });
  afterAll(async () => {
    await db('tenants').whereIn('id', [a, b]).del();
  });

  it('creates connections with encrypted secrets; the first per provider becomes its default', async () => {
    const test = secret('sk_test');
    const live = secret('sk_live');
    const hook = secret('whsec');
    const c = await asA((trx) =>
      createConnection(trx, vault, {
        provider: 'psp_a',
        account_ref: `acct_main_${tag}`,
        label: 'Main',
        credentials: { test: { secret_key: test }, live: { secret_key: live } },
        webhook_secret: hook,
      }),
    );
    expect(c).toMatchObject({
      provider: 'psp_a',
      account_ref: `acct_main_${tag}`,
      label: 'Main',
      is_default: true,
      is_active: true,
      has_test_credential: true,
      has_live_credential: true,
      has_webhook_secret: true,
    });
    expect(c.created_at).toBeInstanceOf(Date);
    const raw = await db('provider_connections').where({ id: c.id }).first();
    expect(raw.tenant_id).toBe(a);
    expect(raw.credential_test_enc).toMatch(/^v1:k\d+:/);
    await asA(async (trx) => {
      expect(await loadCredential(trx, vault, c.id, 'test')).toEqual({ secret_key: test });
      expect(await loadCredential(trx, vault, c.id, 'live')).toEqual({ secret_key: live });
      expect(await loadWebhookSecret(trx, vault, c.id)).toBe(hook);
    });

    const second = await asA((trx) =>
      createConnection(trx, vault, {
        provider: 'psp_a',
        account_ref: `acct_second_${tag}`,
        label: 'Second',
        credentials: { test: { secret_key: secret('sk_test') } },
      }),
    );
    expect(second).toMatchObject({ is_default: false, has_live_credential: false, has_webhook_secret: false });
    await asA(async (trx) => {
      await expectConnectionError(loadCredential(trx, vault, second.id, 'live'), 'credential_missing');
      await expectConnectionError(loadWebhookSecret(trx, vault, second.id), 'webhook_secret_missing');
    });
  });

  it('keeps one default per provider: the database refuses two, setDefault and is_default move it', async () => {
    const list = () => asA((trx) => listConnectionsSafe(trx, { provider: 'psp_a' }));
    const defaults = async () => (await list()).filter((c) => c.is_default).map((c) => c.account_ref);
    expect(await defaults()).toEqual([`acct_main_${tag}`]);

    // The partial unique index is the last word, whatever code runs.
    await expect(
      asA((trx) => trx('provider_connections').where({ provider: 'psp_a' }).update({ is_default: true })),
    ).rejects.toThrow(/provider_connections_one_default|duplicate key/);

    const second = (await list()).find((c) => c.account_ref === `acct_second_${tag}`)!;
    const made = await asA((trx) => setDefault(trx, second.id));
    expect(made.is_default).toBe(true);
    expect(await defaults()).toEqual([`acct_second_${tag}`]);
    expect((await asA((trx) => setDefault(trx, second.id))).is_default).toBe(true); // idempotent

    await asA((trx) =>
      createConnection(trx, vault, {
        provider: 'psp_a',
        account_ref: `acct_third_${tag}`,
        label: 'Third',
        is_default: true,
      }),
    );
    expect(await defaults()).toEqual([`acct_third_${tag}`]);

    // Concurrent "make X default" calls serialise instead of tripping the index.
    const ids = (await list()).map((c) => c.id);
    await Promise.all(ids.map((id) => asA((trx) => setDefault(trx, id))));
    expect(await defaults()).toHaveLength(1);

    // Defaults are per provider.
    await asA((trx) =>
      createConnection(trx, vault, { provider: 'psp_c', account_ref: `acct_rzp_${tag}`, is_default: true }),
    );
    expect(
      (await asA((trx) => listConnectionsSafe(trx)))
        .filter((c) => c.is_default)
        .map((c) => c.provider)
        .sort(),
    ).toEqual(['psp_a', 'psp_c']);
    await asA((trx) => setDefault(trx, ids[0]));
  });

  it('listConnectionsSafe shows presence flags and no secret material at all', async () => {
    const rows = await asA((trx) => listConnectionsSafe(trx));
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual([
        'account_ref',
        'created_at',
        'has_live_credential',
        'has_test_credential',
        'has_webhook_secret',
        'id',
        'is_active',
        'is_default',
        'label',
        'proof_checked_at',
        'proof_error',
        'provider',
        'verified_at',
        'verified_by',
      ]);
    }
    const json = JSON.stringify(rows);
    for (const s of secrets) expect(json).not.toContain(s);
    const encs = await db('provider_connections')
      .where({ tenant_id: a })
      .select('credential_test_enc', 'credential_live_enc', 'webhook_secret_enc');
    const ciphertexts = encs.flatMap((r) => Object.values(r)).filter((v): v is string => typeof v === 'string');
    expect(ciphertexts.length).toBeGreaterThan(3);
    for (const c of ciphertexts) {
      expect(json).not.toContain(c);
      expect(json).not.toContain(c.split(':')[4]);
    }
    expect(json).not.toContain('v1:k');
  });

  it('attach: the default is used when account_id is omitted; re-attaching is idempotent', async () => {
    const def = (await asA((trx) => listConnectionsSafe(trx, { provider: 'psp_a' }))).find((c) => c.is_default)!;
    const first = await asA((trx) => attachToApp(trx, appA, 'psp_a'));
    expect(first).toMatchObject({
      created: true,
      replaced: false,
      attachment: { app_id: appA, provider: 'psp_a', connection_id: def.id, account_ref: def.account_ref },
    });
    const again = await asA((trx) => attachToApp(trx, appA, 'psp_a'));
    expect(again).toEqual({ ...first, created: false });
    expect(await db('app_providers').where({ app_id: appA, provider: 'psp_a' })).toHaveLength(1);
    expect((await asA((trx) => connectionForApp(trx, appA, 'psp_a')))?.id).toBe(def.id);
    expect(JSON.stringify(first)).not.toMatch(/v1:k|_enc/);
  });

  it('attach: an explicit account_id (connection id or account_ref) picks or moves the connection', async () => {
    const conns = await asA((trx) => listConnectionsSafe(trx, { provider: 'psp_a' }));
    const other = conns.find((c) => !c.is_default)!;
    const moved = await asA((trx) => attachToApp(trx, appA, 'psp_a', other.account_ref));
    expect(moved).toMatchObject({ created: false, replaced: true, attachment: { connection_id: other.id } });
    expect(await asA((trx) => attachToApp(trx, appA, 'psp_a', other.id))).toMatchObject({
      created: false,
      replaced: false,
    });
    const e = await expectConnectionError(
      asA((trx) => attachToApp(trx, appA2, 'psp_a', 'acct_nope')),
      'not_found',
    );
    expect(e.candidates?.map((c) => c.id).sort()).toEqual(conns.map((c) => c.id).sort());
  });

  it('attach: a single connection is used even when it is not the default', async () => {
    const only = await asA((trx) =>
      createConnection(trx, vault, { provider: 'psp_b', account_ref: `pdl_${tag}`, is_default: false }),
    );
    expect(only.is_default).toBe(false);
    expect(await asA((trx) => attachToApp(trx, appA, 'psp_b'))).toMatchObject({
      created: true,
      attachment: { connection_id: only.id },
    });
  });

  it('attach: several connections and none default → refused, listing candidates (ids, labels), never secrets', async () => {
    const hookSecret = secret('sig');
    const x = await asA((trx) =>
      createConnection(trx, vault, {
        provider: 'store_ios',
        account_ref: `com.example.x.${tag}`,
        label: 'iOS X',
        is_default: false,
        credentials: {
          live: { issuer_id: 'iss', key_id: 'KEY123', private_key: secret('pem'), bundle_id: 'com.example.x' },
        },
      }),
    );
    const y = await asA((trx) =>
      createConnection(trx, vault, {
        provider: 'store_ios',
        account_ref: `com.example.y.${tag}`,
        label: 'iOS Y',
        is_default: false,
        webhook_secret: hookSecret,
      }),
    );
    const e = await expectConnectionError(
      asA((trx) => attachToApp(trx, appA, 'store_ios')),
      'ambiguous_connection',
    );
    expect(e.candidates).toEqual([
      { id: x.id, label: 'iOS X', account_ref: x.account_ref, is_default: false },
      { id: y.id, label: 'iOS Y', account_ref: y.account_ref, is_default: false },
    ]);
    for (const part of [x.id, y.id, 'iOS X', 'iOS Y']) expect(e.message).toContain(part);
    const shown = e.message + JSON.stringify(e.candidates);
    for (const s of secrets) expect(shown).not.toContain(s);
    expect(shown).not.toContain('v1:k');
    expect(await db('app_providers').where({ app_id: appA, provider: 'store_ios' })).toHaveLength(0);

    await expectConnectionError(
      asA((trx) => attachToApp(trx, appA, 'store_android')),
      'no_connection',
    );
    await expectConnectionError(
      asA((trx) => attachToApp(trx, crypto.randomUUID(), 'psp_a')),
      'app_not_found',
    );
    await asA((trx) => setDefault(trx, y.id));
    expect(await asA((trx) => attachToApp(trx, appA, 'store_ios'))).toMatchObject({
      created: true,
      attachment: { connection_id: y.id },
    });
  });

  it("tenant B cannot see, load, attach or route through tenant A's connections", async () => {
    const aConns = await asA((trx) => listConnectionsSafe(trx));
    const target = aConns.find((c) => c.has_test_credential)!;
    await asB(async (trx) => {
      expect(await listConnectionsSafe(trx)).toEqual([]);
      await expectConnectionError(loadCredential(trx, vault, target.id, 'test'), 'not_found');
      await expectConnectionError(loadWebhookSecret(trx, vault, target.id), 'not_found');
      await expectConnectionError(setDefault(trx, target.id), 'not_found');
      await expectConnectionError(attachToApp(trx, appB, 'psp_a', target.id), 'no_connection');
      await expectConnectionError(attachToApp(trx, appA, 'psp_a'), 'app_not_found');
    });
    // Once A has proven the account, B may type it in (nothing tells B it is taken), but B cannot
    // prove it; B's transaction survives the refusal, which names neither A nor its connection.
    await asA((trx) => markConnectionProven(trx, target.id, 'provider_call'));
    await asB(async (trx) => {
      const claim = await createConnection(trx, vault, { provider: target.provider, account_ref: target.account_ref });
      expect(claim.verified_at).toBeNull();
      const refused = await expectConnectionError(
        markConnectionProven(trx, claim.id, 'provider_call'),
        'account_already_connected',
      );
      for (const leak of [a, target.id, target.label]) expect(refused.message).not.toContain(leak);
      expect((await listConnectionsSafe(trx)).map((c) => [c.id, c.verified_at])).toEqual([[claim.id, null]]);
      await trx('provider_connections').where({ id: claim.id }).del();
    });
    expect(await findConnectionByAccount(db, target.provider, target.account_ref)).toEqual({
      tenant_id: a,
      connection_id: target.id,
    });

    // A's ciphertext copied into B's row (a database-level attacker) does not decrypt there.
    const bConn = await asB((trx) =>
      createConnection(trx, vault, {
        provider: 'psp_a',
        account_ref: `acct_b_${tag}`,
        credentials: { test: { secret_key: secret('sk_test') } },
      }),
    );
    const stolen = await db('provider_connections').where({ id: target.id }).first('credential_test_enc');
    await db('provider_connections')
      .where({ id: bConn.id })
      .update({ credential_test_enc: stolen.credential_test_enc });
    await expect(asB((trx) => loadCredential(trx, vault, bConn.id, 'test'))).rejects.toBeInstanceOf(VaultDecryptError);
    // Even within A, a value moved to another column of the same row fails.
    await db('provider_connections')
      .where({ id: target.id })
      .update({ credential_live_enc: stolen.credential_test_enc });
    await expect(asA((trx) => loadCredential(trx, vault, target.id, 'live'))).rejects.toThrow(/authentication failed/);
  });

  it('findConnectionByAccount routes a webhook to its tenant (owner connection), proven and active connections only', async () => {
    const c = await asA((trx) => createConnection(trx, vault, { provider: 'psp_c', account_ref: `acct_route_${tag}` }));
    expect(await findConnectionByAccount(db, 'psp_c', `acct_route_${tag}`)).toBeNull();
    // A psp_c account is claimed by OAuth only (a pasted key names no account; test/webhooks/oauth-account-claims.test.ts).
    await expectConnectionError(
      asA((trx) => markConnectionProven(trx, c.id, 'provider_call')),
      'oauth_required',
    );
    expect(await findConnectionByAccount(db, 'psp_c', `acct_route_${tag}`)).toBeNull();
    await asA((trx) => markConnectionProven(trx, c.id, 'oauth'));
    expect(await findConnectionByAccount(db, 'psp_c', `acct_route_${tag}`)).toEqual({
      tenant_id: a,
      connection_id: c.id,
    });
    expect(await findConnectionByAccount(db, 'psp_b', `acct_route_${tag}`)).toBeNull();
    expect(await findConnectionByAccount(db, 'psp_c', 'acct_unknown')).toBeNull();
    await db('provider_connections').where({ id: c.id }).update({ is_active: false });
    expect(await findConnectionByAccount(db, 'psp_c', `acct_route_${tag}`)).toBeNull();
    await asA(async (trx) => {
      await expectConnectionError(loadCredential(trx, vault, c.id, 'test'), 'inactive');
      await expectConnectionError(setDefault(trx, c.id), 'inactive');
    });
  });

  it('an unproven claim neither blocks the owner nor routes; a second proven claim is refused; OAuth proves at creation', async () => {
    const account = `com.example.claimed.${tag}`;
    // B types A's bundle id first: no refusal, and no events for B.
    const squat = await asB((trx) => createConnection(trx, vault, { provider: 'store_ios', account_ref: account }));
    expect(squat).toMatchObject({ verified_at: null, verified_by: null });
    expect(await findConnectionByAccount(db, 'store_ios', account)).toBeNull();
    await asB((trx) => recordProofFailure(trx, squat.id, 'test: no app with this bundle id is visible to this key'));
    // A connects it too, and proves it: A routes, B still does not.
    const owner = await asA((trx) => createConnection(trx, vault, { provider: 'store_ios', account_ref: account }));
    const proven = await asA((trx) => markConnectionProven(trx, owner.id, 'provider_call'));
    expect(proven).toMatchObject({ verified_by: 'provider_call', proof_error: null });
    expect(proven.verified_at).toBeInstanceOf(Date);
    expect(await findConnectionByAccount(db, 'store_ios', account)).toEqual({ tenant_id: a, connection_id: owner.id });
    // Proving again keeps the first proof; a failed re-check is shown but does not unprove.
    await asA((trx) => recordProofFailure(trx, owner.id, 'live: unreachable'));
    const again = await asA((trx) => markConnectionProven(trx, owner.id, 'oauth'));
    expect(again).toMatchObject({ verified_by: 'provider_call', verified_at: proven.verified_at, proof_error: null });
    // B can never prove it while A holds it; the database refuses a second proven row outright.
    await expectConnectionError(
      asB((trx) => markConnectionProven(trx, squat.id, 'provider_call')),
      'account_already_connected',
    );
    await expect(
      db('provider_connections').where({ id: squat.id }).update({ verified_at: db.fn.now(), verified_by: 'oauth' }),
    ).rejects.toThrow(/provider_connections_one_proven_owner/);
    // Within one tenant, one connection per account still.
    await expectConnectionError(
      asA((trx) => createConnection(trx, vault, { provider: 'store_ios', account_ref: account })),
      'account_already_connected',
    );

    // OAuth: proven as created; an own unproven connection for the account takes the proof instead of a duplicate.
    const viaOAuth = await asB((trx) =>
      connectProvenByOAuth(trx, vault, {
        provider: 'psp_a',
        account_ref: `acct_oauth_${tag}`,
        credentials: { test: { secret_key: secret('sk_test') } },
      }),
    );
    expect(viaOAuth).toMatchObject({ verified_by: 'oauth', has_test_credential: true });
    const typed = await asB((trx) =>
      createConnection(trx, vault, { provider: 'psp_b', account_ref: `pdl_oauth_${tag}` }),
    );
    const upgraded = await asB((trx) =>
      connectProvenByOAuth(trx, vault, {
        provider: 'psp_b',
        account_ref: `pdl_oauth_${tag}`,
        credentials: { live: { api_key: secret('pdl_live') } },
      }),
    );
    expect(upgraded).toMatchObject({ id: typed.id, verified_by: 'oauth', has_live_credential: true });
    // OAuth for an account another tenant has proven: refused, without naming it.
    const e = await expectConnectionError(
      asB((trx) =>
        connectProvenByOAuth(trx, vault, {
          provider: 'store_ios',
          account_ref: account,
          credentials: { test: { k: secret('k') } },
        }),
      ),
      'account_already_connected',
    );
    expect(e.message).not.toContain(a);
    expect(await findConnectionByAccount(db, 'store_ios', account)).toEqual({ tenant_id: a, connection_id: owner.id });
    await asB((trx) => trx('provider_connections').whereIn('id', [squat.id, viaOAuth.id, typed.id]).del());
    await asA((trx) => trx('provider_connections').where({ id: owner.id }).del());
  });

  it('updateConnectionSecrets replaces and clears secrets; input validation never echoes values', async () => {
    const c = await asA((trx) =>
      createConnection(trx, vault, { provider: 'store_android', account_ref: `com.example.app.${tag}` }),
    );
    const sa = secret('sa_json');
    const audience = secret('aud');
    const updated = await asA((trx) =>
      updateConnectionSecrets(trx, vault, c.id, {
        credentials: { live: { service_account_json: sa } },
        webhook_secret: audience,
      }),
    );
    expect(updated).toMatchObject({ has_live_credential: true, has_webhook_secret: true, has_test_credential: false });
    await asA(async (trx) => {
      expect(await loadCredential(trx, vault, c.id, 'live')).toEqual({ service_account_json: sa });
      expect(await loadWebhookSecret(trx, vault, c.id)).toBe(audience);
    });
    expect(
      (await asA((trx) => updateConnectionSecrets(trx, vault, c.id, { webhook_secret: null }))).has_webhook_secret,
    ).toBe(false);

    const bad = secret('not_an_object');
    const e = await expectConnectionError(
      asA((trx) =>
        createConnection(trx, vault, {
          provider: 'psp_b',
          account_ref: `x_${tag}`,
          credentials: { test: bad as never },
        }),
      ),
      'invalid_request',
    );
    expect(e.message).not.toContain(bad);
    await expectConnectionError(
      db.transaction((trx) => createConnection(trx, vault, { provider: 'psp_a', account_ref: 'no-tenant' })),
      'no_tenant',
    );
  });

  it('no plaintext secret is stored anywhere in the database (every text, json and array column of every table)', async () => {
    expect(secrets.length).toBeGreaterThan(8);
    const cols: Array<{ table_name: string; column_name: string }> = await db('information_schema.columns as c')
      .join('information_schema.tables as t', function () {
        this.on('t.table_name', 'c.table_name').andOn('t.table_schema', 'c.table_schema');
      })
      .where('c.table_schema', 'public')
      .where('t.table_type', 'BASE TABLE')
      .whereIn('c.data_type', ['text', 'character varying', 'json', 'jsonb', 'ARRAY'])
      .select('c.table_name', 'c.column_name');
    expect(cols.some((c) => c.table_name === 'provider_connections' && c.column_name === 'credential_test_enc')).toBe(
      true,
    );
    const hits: string[] = [];
    for (const { table_name, column_name } of cols) {
      const cond = secrets.map(() => `strpos(??::text, ?) > 0`).join(' or ');
      const bindings = secrets.flatMap((s) => [column_name, s]);
      const [{ n }] = await db(table_name).whereRaw(`(${cond})`, bindings).count<{ n: number }[]>('* as n');
      if (Number(n) > 0) hits.push(`${table_name}.${column_name}`);
    }
    expect(hits).toEqual([]);
  });
});
