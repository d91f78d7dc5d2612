import crypto from 'node:crypto';
import type { EmulatorStore } from '../common/types';
import { newRsaKey } from './keys';

export type Mode = 'test' | 'live';

export interface ServiceAccountRecord {
  mode: Mode;
  client_email: string;
  private_key_id: string;
  public_key_pem: string;
  token_uri: string;
}

/** One Play Console app (package name) with its service accounts; kind `accounts`. */
export interface AccountRecord extends Record<string, unknown> {
  account: string;
  project_id: string;
  webhook_secret: string;
  push_service_account_email: string;
  push_service_account_id: string;
  default_language: string;
  credentials: Record<Mode, { service_account_json: string }>;
  service_accounts: ServiceAccountRecord[];
  created: string;
}

const digits = (n: number) => Array.from(crypto.randomBytes(n), (b) => String(b % 10)).join('');

/** A Google service-account key file, as the Cloud console downloads it. */
function serviceAccount(projectId: string, mode: Mode, tokenUri: string) {
  const { privatePem, publicPem } = newRsaKey();
  const clientEmail = `play-billing-${mode}@${projectId}.iam.gserviceaccount.com`;
  const privateKeyId = crypto.randomBytes(20).toString('hex');
  const json = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: privateKeyId,
    private_key: privatePem,
    client_email: clientEmail,
    client_id: digits(21),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
    universe_domain: 'googleapis.com',
  };
  const record: ServiceAccountRecord = {
    mode,
    client_email: clientEmail,
    private_key_id: privateKeyId,
    public_key_pem: publicPem,
    token_uri: tokenUri,
  };
  return { json: JSON.stringify(json), record };
}

export function accounts(store: EmulatorStore, publicUrl: () => string) {
  const all = () => store.list('accounts') as AccountRecord[];
  return {
    all,
    find: (packageName: string) => all().find((a) => a.account === packageName),
    /** `account` of control calls, defaulting to the first app connected (the demo tenant's). */
    resolve(packageName?: unknown): AccountRecord {
      const a =
        typeof packageName === 'string' && packageName ? all().find((x) => x.account === packageName) : all()[0];
      if (!a)
        throw Object.assign(
          new Error(
            packageName ? `no account ${String(packageName)}` : 'no account yet: POST /__control/accounts first',
          ),
          { status: 404 },
        );
      return a;
    },
    findServiceAccount(clientEmail: string): { account: AccountRecord; sa: ServiceAccountRecord } | undefined {
      for (const account of all()) {
        const sa = account.service_accounts.find((s) => s.client_email === clientEmail);
        if (sa) return { account, sa };
      }
      return undefined;
    },
    /** POST /__control/accounts: create (or return) the app; test and live service accounts differ. */
    create(body: Record<string, unknown>) {
      const wanted = typeof body.account === 'string' && body.account.trim() ? body.account.trim() : undefined;
      let a = wanted ? all().find((x) => x.account === wanted) : undefined;
      if (!a) {
        const packageName = wanted ?? `com.example.app${crypto.randomBytes(4).toString('hex')}`;
        const projectId = `play-${crypto.createHash('sha256').update(packageName).digest('hex').slice(0, 10)}`;
        const tokenUri = `${publicUrl()}/token`;
        const [test, live] = [serviceAccount(projectId, 'test', tokenUri), serviceAccount(projectId, 'live', tokenUri)];
        a = store.insert('accounts', {
          account: packageName,
          project_id: projectId,
          // The push subscription's OIDC audience: what the tenant enters as the "signing secret".
          webhook_secret: `https://rtdn.billing.invalid/${encodeURIComponent(packageName)}/${crypto.randomBytes(12).toString('hex')}`,
          push_service_account_email: `rtdn-push@${projectId}.iam.gserviceaccount.com`,
          push_service_account_id: digits(21),
          default_language: 'en-US',
          credentials: { test: { service_account_json: test.json }, live: { service_account_json: live.json } },
          service_accounts: [test.record, live.record],
          created: new Date().toISOString(),
        } satisfies AccountRecord);
      }
      return {
        account: a.account,
        credentials: a.credentials,
        webhook_secret: a.webhook_secret,
        push_service_account_email: a.push_service_account_email,
      };
    },
  };
}

export type Accounts = ReturnType<typeof accounts>;
