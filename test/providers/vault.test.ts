import crypto from 'node:crypto';
import util from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVault, generateMasterKey, VaultDecryptError, type Vault } from '../../vault/vault';
import { parseMasterKey } from '../../vault/keyring';
import { ConfigError } from '../../runtime/config';
import { createConnection, loadCredential, loadWebhookSecret } from '../../db/connection-service';
import { reencryptAll } from '../../db/reencrypt';
import { openPurchase, sealPurchase } from '../../providers/purchase-ref';
import { insertEndpoint, rotateEndpointSecret, signingSecrets } from '../../db/outbound-endpoints';
import { withTenant } from '../../db/tenant-tx';
import { importFileAad } from '../../domain/import-file';
import { heldFieldAad, sealedField } from '../../domain/changes';
import { purchaseTokenAad } from '../../domain/store-purchase';
import { testDb } from '../helpers/db';

const b64 = () => crypto.randomBytes(32).toString('base64');
const AAD = 'tenant-a:conn-1:credential_test_enc';

function expectDecryptFailure(fn: () => unknown, reason: VaultDecryptError['reason']) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(VaultDecryptError);
    expect((e as VaultDecryptError).reason).toBe(reason);
    return e as VaultDecryptError;
  }
  throw new Error('expected decryption to fail');
}

describe('vault: AES-256-GCM envelopes', () => {
  const k1 = `k1:${b64()}`;
  const vault = createVault(k1);

  it('round-trips strings and JSON; the envelope names version and key id', () => {
    for (const s of ['sk_test_abc123', '', 'ünïcødé ✓ \n {"json": true}', 'x'.repeat(10_000)]) {
      const env = vault.encrypt(s, AAD);
      expect(env).toMatch(/^v1:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/);
      expect(env).not.toContain(s || '\u0000');
      expect(vault.decrypt(env, AAD)).toBe(s);
    }
    const cred = { key_id: 'rzp_test_1', key_secret: 'shh' };
    expect(vault.decryptJson(vault.encryptJson(cred, AAD), AAD)).toEqual(cred);
    // Random IVs: the same plaintext never gives the same envelope.
    expect(vault.encrypt('same', AAD)).not.toBe(vault.encrypt('same', AAD));
  });

  it('fails under the wrong key (same id, other bytes) and under an unknown key id', () => {
    const env = vault.encrypt('secret', AAD);
    expectDecryptFailure(() => createVault(`k1:${b64()}`).decrypt(env, AAD), 'auth_failed');
    expectDecryptFailure(() => createVault(`k2:${b64()}`).decrypt(env, AAD), 'unknown_key');
  });

  it('fails on any tampering: ciphertext, tag, iv, key id, truncation', () => {
    const env = vault.encrypt('secret-value-long-enough', AAD);
    const parts = env.split(':');
    const flip = (i: number) => {
      const buf = Buffer.from(parts[i], 'base64url');
      buf[0] ^= 0x01;
      const p = [...parts];
      p[i] = buf.toString('base64url');
      return p.join(':');
    };
    for (const i of [2, 3, 4]) expectDecryptFailure(() => vault.decrypt(flip(i), AAD), 'auth_failed');
    // A second key in the ring does not make a relabelled envelope valid: the header is authenticated.
    const two = createVault(`${k1},k0:${b64()}`);
    const relabelled = ['v1', 'k0', ...parts.slice(2)].join(':');
    expectDecryptFailure(() => two.decrypt(relabelled, AAD), 'auth_failed');
    expectDecryptFailure(() => vault.decrypt(env.slice(0, -4), AAD), 'auth_failed');
    for (const bad of ['', 'plaintext', 'v2:k1:a:b:c', `${env}:extra`, env.replace(/^v1/, 'v0'), 'v1:k1:!!:??:..']) {
      expectDecryptFailure(() => vault.decrypt(bad, AAD), 'malformed');
    }
  });

  it('binds the ciphertext to its row: another tenant, row or field fails', () => {
    const env = vault.encrypt('secret', 'tenant-a:conn-1:credential_test_enc');
    for (const other of [
      'tenant-b:conn-1:credential_test_enc',
      'tenant-a:conn-2:credential_test_enc',
      'tenant-a:conn-1:credential_live_enc',
    ]) {
      const e = expectDecryptFailure(() => vault.decrypt(env, other), 'auth_failed');
      expect(e.message).not.toContain(env);
      expect(e.message).not.toContain('secret');
    }
    expect(() => vault.encrypt('x', '')).toThrow(/aad/);
  });

  it('rotation: a new current key encrypts, the old one still decrypts until removed', () => {
    const env1 = vault.encrypt('rotate-me', AAD);
    const k2 = `k2:${b64()}`;
    const rotated = createVault(`${k2},${k1}`);
    expect(rotated.currentKeyId).toBe('k2');
    expect(rotated.keyIds).toEqual(['k2', 'k1']);
    expect(rotated.decrypt(env1, AAD)).toBe('rotate-me');
    expect(rotated.needsReencrypt(env1)).toBe(true);
    const env2 = rotated.encrypt(rotated.decrypt(env1, AAD), AAD);
    expect(env2.startsWith('v1:k2:')).toBe(true);
    expect(rotated.needsReencrypt(env2)).toBe(false);
    expect(vault.needsReencrypt(env1)).toBe(false);
    expect(rotated.needsReencrypt('not an envelope')).toBe(true);
    const onlyK2 = createVault(k2);
    expect(onlyK2.decrypt(env2, AAD)).toBe('rotate-me');
    expectDecryptFailure(() => onlyK2.decrypt(env1, AAD), 'unknown_key');
  });

  it('never exposes key material through the vault object', () => {
    const raw = parseMasterKey(k1).current.key;
    const shown = JSON.stringify(vault) + util.inspect(vault, { depth: 10, showHidden: true });
    expect(shown).not.toContain(k1.slice(3));
    expect(shown).not.toContain(raw.toString('hex'));
  });
});

describe('MASTER_KEY parsing', () => {
  it('accepts keyId:base64 lists, a bare base64 key, a bare hex key, base64url, surrounding spaces', () => {
    const key = crypto.randomBytes(32);
    expect(createVault(key.toString('base64')).currentKeyId).toBe('k1');
    expect(createVault(key.toString('hex')).currentKeyId).toBe('k1');
    expect(createVault(` main_2024:${key.toString('base64url')} , old-1:${b64()}\n`).keyIds).toEqual([
      'main_2024',
      'old-1',
    ]);
    const bare = createVault(key.toString('base64'));
    const hex = createVault(key.toString('hex'));
    expect(hex.decrypt(bare.encrypt('same key', AAD), AAD)).toBe('same key');
  });

  it('generateMasterKey returns a fresh k<timestamp>:<base64> entry that parses', () => {
    const a = generateMasterKey();
    const b = generateMasterKey(Date.now() + 1000);
    expect(a).toMatch(/^k\d{13}:[A-Za-z0-9+/]{43}=$/);
    expect(a.split(':')[1]).not.toBe(b.split(':')[1]);
    const v = createVault(`${a},${b}`);
    expect(v.currentKeyId).toBe(a.split(':')[0]);
  });

  const good = b64();
  const zeros = Buffer.alloc(32).toString('base64');
  const cases: Array<[string, string | undefined]> = [
    ['unset', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['too short', 'k1:' + crypto.randomBytes(16).toString('base64')],
    ['too long', 'k1:' + crypto.randomBytes(48).toString('base64')],
    ['not base64', 'k1:' + '%'.repeat(44)],
    ['bad key id', `bad id!:${good}`],
    ['key id too long', `${'k'.repeat(41)}:${good}`],
    ['duplicate id', `k1:${good},k1:${b64()}`],
    ['duplicate key', `k1:${good},k2:${good}`],
    ['empty entry', `k1:${good},`],
    ['bare key in a list', `${good},k2:${b64()}`],
    ['all-zero key', zeros],
    ['a passphrase', 'correct horse battery staple'],
  ];
  for (const [name, value] of cases) {
    it(`rejects ${name} with an error naming MASTER_KEY and not echoing it`, () => {
      let err: unknown;
      try {
        createVault(value);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('MASTER_KEY');
      const msg = (err as Error).message + String((err as Error).stack);
      expect(msg).toContain('MASTER_KEY');
      for (const fragment of (value ?? '').split(/[,:\s]/).filter((f) => f.length >= 6))
        expect(msg).not.toContain(fragment);
      expect(msg).not.toContain(good);
    });
  }
});

describe('rotation across the database: reencryptAll', () => {
  const db = testDb();
  let tenantId: string;
  const tag = crypto.randomUUID().slice(0, 8);
  const plain = { test: `sk_test_${tag}_rot`, live: `sk_live_${tag}_rot`, hook: `whsec_${tag}_rot` };
  const k1 = `k1:${b64()}`;
  const k2 = `k2:${b64()}`;
  let connectionId: string;
  let strangerId: string;
  let endpointId: string;
  let endpointSecrets: string[];

  const rawRow = (id: string) =>
    db('provider_connections').where({ id }).first('credential_test_enc', 'credential_live_enc', 'webhook_secret_enc');
  const loadAll = (v: Vault, id: string) =>
    withTenant(db, tenantId, async (trx) => ({
      test: (await loadCredential(trx, v, id, 'test')).secret_key,
      live: (await loadCredential(trx, v, id, 'live')).secret_key,
      hook: await loadWebhookSecret(trx, v, id),
    }));

  beforeAll(async () => {
    [{ id: tenantId }] = await db('tenants')
      .insert({ name: `vault-rot-${tag}` })
      .returning('id');
    await withTenant(db, tenantId, async (trx) => {
      const c = await createConnection(trx, createVault(k1), {
        provider: 'psp_a',
        account_ref: `acct_rot_${tag}`,
        credentials: { test: { secret_key: plain.test }, live: { secret_key: plain.live } },
        webhook_secret: plain.hook,
      });
      connectionId = c.id;
      // A row under a key the operator no longer has: must be reported, never rewritten.
      const s = await createConnection(trx, createVault(`k9:${b64()}`), {
        provider: 'psp_b',
        account_ref: `acct_lost_${tag}`,
        credentials: { test: { api_key: `pdl_${tag}` } },
      });
      strangerId = s.id;
      // An outbound webhook endpoint mid-rotation: its current and previous signing secrets are envelopes too.
      const e = await insertEndpoint(trx, createVault(k1), {
        tenantId,
        url: 'https://hooks.example.com/in',
        description: null,
        eventTypes: [],
        taskQueue: 'none',
      });
      endpointId = e.row.id;
      const rotated = await rotateEndpointSecret(trx, createVault(k1), endpointId, 3600);
      endpointSecrets = [rotated!.secret, e.secret];
    });
  });
  afterAll(async () => {
    await db('tenants').where({ id: tenantId }).del();
  });

  it('moves every row to the new key, is idempotent, and lets the old key be removed', async () => {
    const before = await rawRow(connectionId);
    for (const v of Object.values(before)) expect(String(v).startsWith('v1:k1:')).toBe(true);

    const rotated = createVault(`${k2},${k1}`);
    expect(await loadAll(rotated, connectionId)).toEqual(plain);
    for (const v of Object.values(before)) expect(rotated.needsReencrypt(String(v))).toBe(true);

    const dry = await reencryptAll(db, rotated, { tenantId, dryRun: true });
    expect(dry).toMatchObject({ dry_run: true, rows: 3, values: 6, reencrypted: 5, failed: 1 });
    expect(await rawRow(connectionId)).toEqual(before);

    const first = await reencryptAll(db, rotated, { tenantId, batchSize: 1 });
    expect(first).toMatchObject({
      current_key_id: 'k2',
      rows: 3,
      values: 6,
      reencrypted: 5,
      already_current: 0,
      failed: 1,
    });
    expect(first.failures).toEqual([
      { table: 'provider_connections', id: strangerId, field: 'credential_test_enc', reason: 'unknown_key' },
    ]);
    expect(JSON.stringify(first)).not.toContain(plain.test);
    for (const s of endpointSecrets) expect(JSON.stringify(first)).not.toContain(s);
    const endpointRow = await db('webhook_endpoints')
      .where({ id: endpointId })
      .first('secret_enc', 'previous_secret_enc');
    for (const v of Object.values(endpointRow)) expect(String(v).startsWith('v1:k2:')).toBe(true);

    const after = await rawRow(connectionId);
    for (const v of Object.values(after)) expect(String(v).startsWith('v1:k2:')).toBe(true);
    expect(
      String((await db('provider_connections').where({ id: strangerId }).first()).credential_test_enc).startsWith(
        'v1:k9:',
      ),
    ).toBe(true);

    const again = await reencryptAll(db, rotated, { tenantId });
    expect(again).toMatchObject({ reencrypted: 0, already_current: 5, failed: 1 });
    expect(await rawRow(connectionId)).toEqual(after);

    // k1 removed from MASTER_KEY: everything still decrypts; a k1-only vault no longer can.
    expect(await loadAll(createVault(k2), connectionId)).toEqual(plain);
    await expect(loadAll(createVault(k1), connectionId)).rejects.toThrow(VaultDecryptError);
    // The endpoint still signs with both secrets of its overlap, under k2 alone.
    expect(await withTenant(db, tenantId, (trx) => signingSecrets(trx, createVault(k2), endpointId))).toEqual(
      endpointSecrets,
    );
    await expect(withTenant(db, tenantId, (trx) => signingSecrets(trx, createVault(k1), endpointId))).rejects.toThrow(
      VaultDecryptError,
    );
    // Other suites may run the unscoped command in this database: do not leave them an undecryptable row.
    await db('provider_connections').where({ id: strangerId }).del();
  });

  it('the unscoped run (every tenant) leaves this tenant current and reports, not rewrites, foreign rows', async () => {
    const res = await reencryptAll(db, createVault(`${k2},${k1}`));
    expect(res.rows).toBeGreaterThanOrEqual(1); // this tenant's row; other suites' rows come and go
    expect(res.failures.some((f) => f.id === connectionId)).toBe(false);
    const row = await rawRow(connectionId);
    for (const v of Object.values(row)) expect(String(v).startsWith('v1:k2:')).toBe(true);
  });
});

describe('rotation: Play tokens kept with their claims', () => {
  const db = testDb();
  const k1 = `k1:${b64()}`;
  const k2 = `k2:${b64()}`;

  it('move to the new key bound to their tenant and purchase, and open under it alone', async () => {
    const [{ id: tenantId }] = await db('tenants')
      .insert({ name: `vault-tokens-${crypto.randomUUID().slice(0, 8)}` })
      .returning('id');
    const token = `token-${crypto.randomUUID()}`;
    const ref = sealPurchase(createVault(k1), tenantId, 'store_android', token);
    await db('store_purchase_tokens').insert({
      tenant_id: tenantId,
      provider: 'store_android',
      token_hash: ref.key,
      app_user_id: 'u1',
      purchase_token_enc: ref.sealed,
    });
    const res = await reencryptAll(db, createVault(`${k2},${k1}`), { tenantId });
    expect(res).toMatchObject({ reencrypted: 1, failed: 0 });
    expect(JSON.stringify(res)).not.toContain(token);
    const row = await db('store_purchase_tokens').where({ tenant_id: tenantId }).first('purchase_token_enc');
    expect(row.purchase_token_enc).toMatch(/^v1:k2:/);
    const moved = { key: ref.key, sealed: row.purchase_token_enc };
    expect(openPurchase(createVault(k2), tenantId, 'store_android', moved)).toBe(token);
    // Still bound to its tenant: another tenant's id does not open it.
    expect(() => openPurchase(createVault(k2), crypto.randomUUID(), 'store_android', moved)).toThrow();
    await db('tenants').where({ id: tenantId }).del();
  });
});

describe('rotation: what waits sealed for a person or an activity', () => {
  const db = testDb();
  const k1 = `k1:${b64()}`;
  const k2 = `k2:${b64()}`;

  it('an uploaded import file, its Play tokens and a held write’s sealed field move to the new key and open under it alone', async () => {
    const [{ id: tenantId }] = await db('tenants')
      .insert({ name: `vault-held-${crypto.randomUUID().slice(0, 8)}` })
      .returning('id');
    const old = createVault(k1);
    const csv = `purchase_token,app_user_id\ntoken-${crypto.randomUUID()},u1\n`;
    const [{ id: importId }] = await db('imports')
      .insert({ tenant_id: tenantId, provider: 'store_android', source: 'file', file_sealed: 'pending' })
      .returning('id');
    await db('imports')
      .where({ id: importId })
      .update({ file_sealed: old.encrypt(csv, importFileAad(tenantId, importId)) });
    const token = `token-${crypto.randomUUID()}`;
    const ref = sealPurchase(old, tenantId, 'store_android', token);
    await db('import_items').insert(
      [1, 2].map((line) => ({
        tenant_id: tenantId,
        import_id: importId,
        line,
        provider: 'store_android',
        ref: ref.key,
        sealed: line === 1 ? ref.sealed : old.encrypt(token, purchaseTokenAad(tenantId, 'store_android', ref.key)),
      })),
    );
    const [{ id: keyId }] = await db('api_keys')
      .insert({ tenant_id: tenantId, key_hash: crypto.randomUUID(), key_hint: 'x', scopes: ['imports:write'] })
      .returning('id');
    const [{ id: changeId }] = await db('held_changes')
      .insert({
        tenant_id: tenantId,
        operation: 'imports.create',
        input: JSON.stringify({ csv: '1 line', [sealedField('csv')]: old.encrypt(csv, heldFieldAad(tenantId, 'csv')) }),
        requested_by_key: keyId,
        surface: 'rest',
        plan: JSON.stringify({ summary: 'x', targets: [], basis: null }),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .returning('id');

    const res = await reencryptAll(db, createVault(`${k2},${k1}`), { tenantId, batchSize: 1 });
    expect(res).toMatchObject({ values: 4, reencrypted: 4, failed: 0 });
    expect(JSON.stringify(res)).not.toContain(token);
    const again = await reencryptAll(db, createVault(`${k2},${k1}`), { tenantId });
    expect(again).toMatchObject({ values: 4, reencrypted: 0, already_current: 4 });

    const only = createVault(k2);
    const file = await db('imports').where({ id: importId }).first('file_sealed');
    expect(only.decrypt(file.file_sealed, importFileAad(tenantId, importId))).toBe(csv);
    for (const item of await db('import_items').where({ import_id: importId }).select('sealed'))
      expect(openPurchase(only, tenantId, 'store_android', { key: ref.key, sealed: item.sealed })).toBe(token);
    const held = await db('held_changes').where({ id: changeId }).first('input');
    expect(held.input.csv).toBe('1 line');
    expect(only.decrypt(held.input[sealedField('csv')], heldFieldAad(tenantId, 'csv'))).toBe(csv);
    expect(() => createVault(k1).decrypt(file.file_sealed, importFileAad(tenantId, importId))).toThrow(
      VaultDecryptError,
    );
    await db('tenants').where({ id: tenantId }).del();
  });
});
