import { isEntryPoint } from './entry';
import { loadConfig } from '../runtime/config';
import { openDatabase } from '../db/open-database';
import { SCOPES, scopeDescription } from '../domain/scopes';

import { createTenant, tenantExists, tenantOfApiKey } from '../db/tenants';
import { isUuid } from '../domain/ids';
import { recordOperatorAudit } from '../db/audit';
import { ApiError } from '../operations/errors';
import { tenantOfRevenueCatKey } from '../db/revenuecat';
import type { AsOperator } from './admin-operator';

/**
 * Test-mode keys in RevenueCat's formats, one per platform: `revenuecat_keys.create` run as the
 * operator for each, as `key:create --revenuecat` runs it, so each has the operation's audit row,
 * limits and rules.
 */
async function mintRevenueCatKeySet(asOperator: AsOperator, tenantId: string) {
  const { createRevenueCatKeyOp } = await import('../operations/revenuecat-keys/create');
  const keys = { web: '', ios: '', android: '' };
  for (const platform of ['web', 'ios', 'android'] as const)
    keys[platform] = String((await asOperator(tenantId, createRevenueCatKeyOp, { platform, mode: 'test' })).public_key);
  return keys;
}

/** The scope column of the usage text: the longest name and two spaces. */
const SCOPE_WIDTH = Math.max(...SCOPES.map((s) => s.length)) + 2;

const HELP = `Billing service admin CLI

  npm run -s admin -- tenant:create --name NAME [--json]
      Create a tenant (free tier) with an app and an all-scope secret key.
      → {"tenant_id", "secret_key", "publishable_key", "revenuecat_keys": {"web", "ios", "android"}}
  npm run -s admin -- key:create --tenant ID --scopes a,b [--expires-in SECONDS] [--name NAME] [--require-approval] [--json]
      Mint a secret key; the value is printed once and only its SHA-256 is stored.
      --require-approval: every write made with the key waits for a person's approval in the dashboard.
      → {"key_id", "secret_key"}
  npm run -s admin -- key:create --tenant ID --revenuecat web|ios|android [--mode test|live] [--json]
      Mint a public key in RevenueCat's format for the tenant's app (rcb_sb_/rcb_, appl_, goog_),
      for RevenueCat's own SDKs pointed at {API host}/revenuecat; --mode defaults to test.
      → {"key_id", "public_key"}
  npm run -s admin -- key:list --tenant ID --revenuecat [--json]
      The tenant's keys for RevenueCat's SDKs, newest first: id, platform, mode, hint, created,
      last used (to the minute), revoked. → {"data": [{"id", "platform", "mode", "key_hint", …}]}
  npm run -s admin -- key:revoke --key ID [--json]
      Revoke a secret key or a RevenueCat-format public key by its id.
  npm run -s admin -- demo [--json]
      The demo tenant (created and seeded if missing) with a freshly minted all-scope key, and
      (not in production) its dashboard login, generated once into the data dir.
      → {"tenant_id", "secret_key", "publishable_key", "revenuecat_keys", "dashboard_email", "dashboard_password"}
      (revenuecat_keys: freshly minted test-mode keys {"web", "ios", "android"}, as tenant:create's)
  npm run -s admin -- demo:publishable-key [--json]
      The demo tenant's test publishable key (created and seeded if missing); mints no secret key.
      → {"tenant_id", "publishable_key"}
  npm run -s admin -- vault:reencrypt [--json]
      Re-encrypt every stored provider credential under the current MASTER_KEY entry.
  npm run -s admin -- token-key:rotate [--json]
      A new signing key signs entitlement tokens and digests from now on; the old one signs
      nothing more and stays published while what it signed can be checked.
      → {"kid", "retired"}
  npm run -s admin -- token-key:withdraw --kid KID [--json]
      Unpublish a compromised signing key at once (what it signed stops verifying) and erase its
      private half; when it was the signing key, a new one signs from now on.
      → {"kid", "withdrawn", "already_withdrawn", "new_signer"}
  npm run -s admin -- workflow:history --id WORKFLOW_ID [--run RUN_ID] [--json]
      A workflow's history with its payloads decrypted (they are ciphertext in Temporal and its UI).
      Recorded in the workflow's tenant's audit trail.

Scopes:
${SCOPES.map((s) => `  ${s.padEnd(SCOPE_WIDTH)}${scopeDescription(s)}`).join('\n')}
Environment: DATABASE_URL (else the embedded Postgres under .data/), MASTER_KEY,
  TEMPORAL_ADDRESS (else the local dev server) and TEMPORAL_NAMESPACE for workflow:history.`;

class UsageError extends Error {}

const lastUsed = (k: Record<string, unknown>) => (k.last_used_at ? `last used ${k.last_used_at}` : 'never used');

function parseArgs(argv: string[]): { command?: string; flags: Record<string, string | true> } {
  const flags: Record<string, string | true> = {};
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const name = a.slice(2);
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        flags[name] = next;
        i++;
      } else flags[name] = true;
    } else if (!command) command = a;
    else throw new UsageError(`unexpected argument "${a}"`);
  }
  return { command, flags };
}

function str(flags: Record<string, string | true>, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v.trim();
}

/** Where a command writes: the process's own streams when run as the CLI. */
export interface AdminIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

async function main(argv: string[], env: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  const println = (line: string) => io.stdout.write(`${line}\n`);
  const { command, flags } = parseArgs(argv);
  if (!command || flags.help || command === 'help') {
    println(HELP);
    return 0;
  }
  const json = flags.json === true;
  const known = [
    'tenant:create',
    'key:create',
    'key:revoke',
    'key:list',
    'demo',
    'demo:publishable-key',
    'vault:reencrypt',
    'workflow:history',
    'token-key:rotate',
    'token-key:withdraw',
  ];
  if (!known.includes(command)) throw new UsageError(`unknown command "${command}" (try --help)`);

  // The flags' syntax is checked before touching the database; what they mean (the scopes, the
  // expiry) is the key operation's to judge, with its own messages (scripts/admin-operator.ts).
  const revenuecat = command === 'key:create' && flags.revenuecat !== undefined;
  if (revenuecat) {
    // The platform and the mode are the operation's to judge (revenuecat_keys.create), as the scopes are key:create's.
    if (!isUuid(str(flags, 'tenant'))) throw new UsageError('--tenant must be a tenant id (uuid)');
    str(flags, 'revenuecat');
    if (flags.mode !== undefined) str(flags, 'mode');
    for (const f of ['scopes', 'expires-in', 'name', 'require-approval'])
      if (flags[f] !== undefined) throw new UsageError(`--${f} is for secret keys, not with --revenuecat`);
  } else if (command === 'key:create') {
    if (flags['require-approval'] !== undefined && flags['require-approval'] !== true)
      throw new UsageError('--require-approval takes no value');
    if (!isUuid(str(flags, 'tenant'))) throw new UsageError('--tenant must be a tenant id (uuid)');
    str(flags, 'scopes');
    if (flags['expires-in'] === true) throw new UsageError('--expires-in takes a number of seconds');
  }
  if (command === 'tenant:create') str(flags, 'name');
  if (command === 'key:list') {
    if (!isUuid(str(flags, 'tenant'))) throw new UsageError('--tenant must be a tenant id (uuid)');
    if (flags.revenuecat !== true)
      throw new UsageError('key:list lists the keys for RevenueCat’s SDKs: add --revenuecat');
  }
  if (command === 'key:revoke' && !isUuid(str(flags, 'key'))) throw new UsageError('--key must be a key id (uuid)');
  if (command === 'token-key:withdraw') str(flags, 'kid');
  if (command === 'workflow:history') {
    str(flags, 'id');
    if (flags.run !== undefined) str(flags, 'run');
  }

  const config = loadConfig(env);
  const { db, close } = await openDatabase(config, { pool: { max: 2 }, as: 'owner' });
  // Loaded on first use (the operations' modules); its logs go to stderr, as stdout carries the answer.
  const asOperator: AsOperator = async (tenantId, op, input) =>
    (await import('./admin-operator')).runAsOperator({ db, config, logTo: io.stderr }, tenantId, op, input);
  let code = 0;
  try {
    let out: Record<string, unknown>;
    if (command === 'tenant:create') {
      const t = await createTenant(db, { name: str(flags, 'name') });
      await recordOperatorAudit(db, {
        tenantId: t.tenant_id,
        action: 'tenant.create',
        detail: { name: str(flags, 'name') },
      });
      const revenuecatKeys = await mintRevenueCatKeySet(asOperator, t.tenant_id);
      out = {
        tenant_id: t.tenant_id,
        secret_key: t.secret_key,
        publishable_key: t.publishable_key,
        revenuecat_keys: revenuecatKeys,
      };
    } else if (revenuecat) {
      const tenantId = str(flags, 'tenant');
      if (!(await tenantExists(db, tenantId))) throw new UsageError(`no tenant with id ${tenantId}`);
      const { createRevenueCatKeyOp } = await import('../operations/revenuecat-keys/create');
      const made = await asOperator(tenantId, createRevenueCatKeyOp, {
        platform: str(flags, 'revenuecat'),
        ...(flags.mode === undefined ? {} : { mode: str(flags, 'mode') }),
      });
      out = { key_id: made.id, public_key: made.public_key };
    } else if (command === 'key:list') {
      const tenantId = str(flags, 'tenant');
      if (!(await tenantExists(db, tenantId))) throw new UsageError(`no tenant with id ${tenantId}`);
      const { listRevenueCatKeysOp } = await import('../operations/revenuecat-keys/list');
      const listed = (await asOperator(tenantId, listRevenueCatKeysOp, {})) as {
        data: Record<string, unknown>[];
      };
      // A list, not key: value pairs: one line per key.
      if (!json) {
        for (const k of listed.data)
          println(
            [
              k.id,
              k.platform,
              k.mode,
              k.key_hint,
              `created ${k.created_at}`,
              lastUsed(k),
              k.revoked_at ? `revoked ${k.revoked_at}` : '',
            ]
              .filter(Boolean)
              .join('  '),
          );
        return 0;
      }
      out = listed;
    } else if (command === 'key:create') {
      // The operator names the tenant: finding it is the owner connection's, by design.
      const tenantId = str(flags, 'tenant');
      if (!(await tenantExists(db, tenantId))) throw new UsageError(`no tenant with id ${tenantId}`);
      const { createApiKey } = await import('../operations/api-keys/create');
      const expiresIn = flags['expires-in'];
      const name = typeof flags.name === 'string' && flags.name.trim() !== '' ? flags.name : undefined;
      const made = await asOperator(tenantId, createApiKey, {
        scopes: str(flags, 'scopes')
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
        ...(name === undefined ? {} : { name }),
        // Seconds as given; a value that is not a number is the operation's to refuse.
        ...(typeof expiresIn === 'string' ? { expires_in_seconds: Number(expiresIn) } : {}),
        ...(flags['require-approval'] === true ? { require_approval: true } : {}),
      });
      out = { key_id: made.id, secret_key: made.secret };
    } else if (command === 'key:revoke') {
      // Only the key's id is given: the tenant it belongs to is found on the owner connection.
      const keyId = str(flags, 'key');
      const tenantId = await tenantOfApiKey(db, keyId);
      const rcTenant = tenantId ? null : await tenantOfRevenueCatKey(db, keyId);
      if (!tenantId && !rcTenant) throw new UsageError(`no key with id ${keyId}`);
      const revoked = rcTenant
        ? await asOperator(rcTenant, (await import('../operations/revenuecat-keys/revoke')).revokeRevenueCatKeyOp, {
            id: keyId,
          })
        : await asOperator(tenantId!, (await import('../operations/api-keys/revoke')).revokeApiKeyOp, {
            id: keyId,
          });
      out = { key_id: keyId, revoked: true, already_revoked: revoked.already_revoked };
    } else if (command === 'demo') {
      const { ensureDemoTenant } = await import('../seed/demo');
      const { ensureDemoLogin } = await import('../seed/demo-login');
      const demo = await ensureDemoTenant(db, config);
      // The dashboard login (never in production, where none is made): generated once into the data dir.
      const login = await ensureDemoLogin(db, config, demo.tenant_id);
      const withKeys = { ...demo, revenuecat_keys: await mintRevenueCatKeySet(asOperator, demo.tenant_id) };
      out = login ? { ...withKeys, dashboard_email: login.email, dashboard_password: login.password } : withKeys;
    } else if (command === 'demo:publishable-key') {
      // What a client app needs, and nothing more: no secret key is minted for it.
      const { ensureDemoTenant } = await import('../seed/demo');
      const demo = await ensureDemoTenant(db, config, { mintKey: false });
      out = { tenant_id: demo.tenant_id, publishable_key: demo.publishable_key };
    } else if (command === 'token-key:rotate' || command === 'token-key:withdraw') {
      const { runTokenKey } = await import('./admin-token-keys');
      const done = await runTokenKey(
        db,
        config,
        command === 'token-key:rotate' ? { rotate: true } : { withdraw: str(flags, 'kid') },
      );
      if (!done) throw new UsageError(`no signing key with kid ${str(flags, 'kid')}`);
      out = done;
    } else if (command === 'workflow:history') {
      // The Temporal client is the slowest import here: loaded only by the command that needs it.
      const { formatHistory, NotFound, runWorkflowHistory } = await import('./admin-workflow');
      const history = await runWorkflowHistory(
        db,
        config,
        str(flags, 'id'),
        flags.run === undefined ? undefined : str(flags, 'run'),
      ).catch((e) => {
        throw e instanceof NotFound ? new UsageError(e.message) : e;
      });
      // Events are a list, not key: value pairs.
      if (!json) {
        println(formatHistory(history));
        return 0;
      }
      out = { ...history };
    } else {
      const { runReencrypt } = await import('./admin-vault');
      const result = await runReencrypt(db, config);
      if (result.failed > 0) {
        // The old key must stay until nothing fails; say so with the exit code too.
        code = 1;
        io.stderr.write(
          `error: ${result.failed} value(s) could not be decrypted; keep the old MASTER_KEY entries and see "failures"\n`,
        );
      }
      out = result;
    }
    if (json) io.stdout.write(JSON.stringify(out) + '\n');
    else for (const [k, v] of Object.entries(out)) println(`${k}: ${v}`);
    return code;
  } finally {
    await close();
  }
}

/**
 * One admin command, as `npm run -s admin -- …` runs it: its arguments, its environment (what
 * `loadConfig` reads), its streams; answers the exit code (0, 1 on a failure, 2 on bad input).
 */
export function runAdmin(argv: string[], env: NodeJS.ProcessEnv, io: AdminIo): Promise<number> {
  return main(argv, env, io).catch((err) => {
    // An operation's refusal (a 4xx) is bad input, like a usage error: its own words, exit 2.
    const refused = err instanceof ApiError && err.status < 500;
    const msg =
      err instanceof UsageError ? err.message : refused ? (err.detail ?? err.code) : `${(err as Error).message ?? err}`;
    io.stderr.write(`error: ${msg.split('\n')[0]}\n`);
    return err instanceof UsageError || refused ? 2 : 1;
  });
}

if (isEntryPoint(import.meta.url)) {
  process.exit(await runAdmin(process.argv.slice(2), process.env, process));
}
