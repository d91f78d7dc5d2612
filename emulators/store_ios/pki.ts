import crypto from 'node:crypto';
import jsrsasign from 'jsrsasign';
import type { EmulatorStore } from '../common/types';

/**
 * The emulator's stand-in for Apple's signing PKI: a self-made root CA → intermediate (with
 * Apple's WWDR intermediate marker OID 1.2.840.113635.100.6.2.1) → leaf (with the App Store
 * receipt-signing OID 1.2.840.113635.100.6.11.1), all P-256. That is exactly what the official
 * SignedDataVerifier checks, so it accepts our JWS when told to trust our root. A second,
 * unrelated chain signs the "bad signature" events. Both are generated once (encoded by jsrsasign,
 * which the Apple library depends on, as node:crypto cannot issue certificates; signed by
 * node:crypto) and kept in the store,
 * so a restart with a state file keeps the same root.
 */
export interface Chain {
  root_pem: string;
  intermediate_pem: string;
  leaf_pem: string;
  leaf_key_pem: string;
}

interface PkiRecord extends Record<string, unknown> {
  id: string;
  trusted: Chain;
  untrusted?: Chain;
}

export interface Pki {
  trusted: Chain;
  /** Made on first use (the first "bad signature" event): not every emulator needs it. */
  readonly untrusted: Chain;
}

const INTERMEDIATE_OID = '1.2.840.113635.100.6.2.1';
const LEAF_OID = '1.2.840.113635.100.6.11.1';

function keyPair(): { priv: string; pub: string } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    priv: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    pub: publicKey.export({ type: 'spki', format: 'pem' }) as string,
  };
}

// X.509 UTCTime, YYMMDDHHMMSSZ
const utcTime = (d: Date) => `${d.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`;

function issue(p: {
  serial: string;
  subject: string;
  issuer: string;
  pub: string;
  caKey: string;
  ca: boolean;
  markerOid?: string;
}): string {
  const now = Date.now();
  const params = {
    version: 3,
    serial: { hex: p.serial },
    issuer: { str: p.issuer },
    subject: { str: p.subject },
    // Valid from a year back: the verifier checks dates at the payload's signedDate, which tests may set in the past.
    notbefore: utcTime(new Date(now - 365 * 86_400_000)),
    notafter: utcTime(new Date(now + 20 * 365 * 86_400_000)),
    sbjpubkey: p.pub,
    sigalg: 'SHA256withECDSA',
    ext: [
      { extname: 'basicConstraints', cA: p.ca, critical: true },
      { extname: 'keyUsage', critical: true, names: p.ca ? ['keyCertSign', 'cRLSign'] : ['digitalSignature'] },
      ...(p.markerOid ? [{ extname: p.markerOid, extn: '0500' }] : []), // the marker extensions carry ASN.1 NULL
    ],
  };
  // jsrsasign encodes; node:crypto signs (ECDSA's DER signature, as X.509 carries it). jsrsasign's own
  // signing is pure JavaScript and took most of a chain's 0.2 s of CPU, paid by every emulator start.
  const x509 = jsrsasign.KJUR.asn1.x509 as unknown as {
    TBSCertificate: new (params: unknown) => { tohex(): string };
    Certificate: new (params: unknown) => { getPEM(): string };
  };
  const tbsobj = new x509.TBSCertificate(params);
  const sighex = crypto.sign('sha256', Buffer.from(tbsobj.tohex(), 'hex'), p.caKey).toString('hex');
  return new x509.Certificate({ ...params, tbsobj, sighex }).getPEM();
}

/**
 * A certificate serial as hex: a positive INTEGER in minimal DER, so no high bit on the first
 * byte (that would make it negative) and no leading 0x00 byte (OpenSSL refuses that as "illegal
 * padding", about one chain in 170 before this rule). The first digit is therefore 1–7.
 */
export function certificateSerial(random: Buffer): string {
  return random.toString('hex').replace(/^[089a-f]/, '1');
}

function makeChain(label: string): Chain {
  const root = keyPair();
  const inter = keyPair();
  const leaf = keyPair();
  const serial = () => certificateSerial(crypto.randomBytes(8));
  const rootName = `/CN=${label} Root CA/OU=App Store Emulator/O=Billing Service Test`;
  const interName = `/CN=${label} WWDR Intermediate/OU=App Store Emulator/O=Billing Service Test`;
  return {
    root_pem: issue({
      serial: serial(),
      subject: rootName,
      issuer: rootName,
      pub: root.pub,
      caKey: root.priv,
      ca: true,
    }),
    intermediate_pem: issue({
      serial: serial(),
      subject: interName,
      issuer: rootName,
      pub: inter.pub,
      caKey: root.priv,
      ca: true,
      markerOid: INTERMEDIATE_OID,
    }),
    leaf_pem: issue({
      serial: serial(),
      subject: `/CN=${label} StoreKit Signing/OU=App Store Emulator/O=Billing Service Test`,
      issuer: interName,
      pub: leaf.pub,
      caKey: inter.priv,
      ca: false,
      markerOid: LEAF_OID,
    }),
    leaf_key_pem: leaf.priv,
  };
}

export function loadPki(store: EmulatorStore): Pki {
  let rec = store.find('pki', (r) => r.id === 'signing') as PkiRecord | undefined;
  if (!rec) rec = store.insert<PkiRecord>('pki', { id: 'signing', trusted: makeChain('Emulated Apple') });
  const record = rec;
  return {
    trusted: record.trusted,
    get untrusted() {
      if (!record.untrusted) {
        record.untrusted = makeChain('Untrusted');
        store.save();
      }
      return record.untrusted;
    },
  };
}

const der = (pem: string) => new crypto.X509Certificate(pem).raw;

export function rootCaView(chain: Chain): { der_base64: string; pem: string; sha256: string } {
  const cert = new crypto.X509Certificate(chain.root_pem);
  return { der_base64: cert.raw.toString('base64'), pem: chain.root_pem, sha256: cert.fingerprint256 };
}

/** A compact JWS as the App Store signs it: ES256, x5c = [leaf, intermediate, root]. */
export function signJws(chain: Chain, payload: unknown): string {
  const header = {
    alg: 'ES256',
    x5c: [chain.leaf_pem, chain.intermediate_pem, chain.root_pem].map((p) => der(p).toString('base64')),
  };
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const sig = crypto.sign('sha256', Buffer.from(input), { key: chain.leaf_key_pem, dsaEncoding: 'ieee-p1363' });
  return `${input}.${sig.toString('base64url')}`;
}
