import crypto from 'node:crypto';
import jsrsasign from 'jsrsasign';
import type { EmulatorStore } from '../common/types';
import { pickAccount } from './accounts';
import type { Chain } from './pki';
import { transactions, type Transaction } from './transactions';

/**
 * A StoreKit 1 app receipt, the file `Bundle.main.appStoreReceiptURL` holds on a device and
 * the apps on StoreKit 1 post (base64): a PKCS#7 (CMS SignedData) container whose content is
 * Apple's receipt payload, a SET of `ReceiptAttribute ::= SEQUENCE { type INTEGER, version
 * INTEGER, value OCTET STRING }`, with one in-app purchase receipt (type 17, itself such a SET)
 * per transaction. The field numbers are Apple's ("Receipt Fields", "In-App Purchase Receipt
 * Fields"). Signed by the emulator's leaf certificate (Apple signs with its receipt-signing
 * certificate): the service never trusts a receipt, it only takes a transaction id out of it
 * and asks the App Store Server API.
 */
const { KJUR } = jsrsasign;
/** jsrsasign 11's DER classes (its published types lag behind the library): all we use is the encoding. */
interface Der {
  tohex(): string;
}
const asn1 = KJUR.asn1 as unknown as Record<
  'DERSequence' | 'DERSet' | 'DERInteger' | 'DEROctetString' | 'DERUTF8String' | 'DERIA5String',
  new (params: object) => Der
>;

const field = (type: number, value: Der) =>
  new asn1.DERSequence({
    array: [
      new asn1.DERInteger({ int: type }),
      new asn1.DERInteger({ int: 1 }),
      new asn1.DEROctetString({ hex: value.tohex() }),
    ],
  });
const utf8 = (s: string) => new asn1.DERUTF8String({ str: s });
const ia5Date = (ms: number) => new asn1.DERIA5String({ str: new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') });
const int = (n: number) => new asn1.DERInteger({ int: n });

function inAppRecord(tx: Transaction): Der {
  return new asn1.DERSet({
    array: [
      field(1701, int(tx.quantity)),
      field(1702, utf8(tx.productId)),
      field(1703, utf8(tx.transactionId)),
      field(1704, ia5Date(tx.purchaseDate)),
      field(1705, utf8(tx.originalTransactionId)),
      field(1706, ia5Date(tx.originalPurchaseDate)),
      // A non-consumable has no expiry.
      ...(tx.expiresDate === undefined ? [] : [field(1708, ia5Date(tx.expiresDate))]),
      field(1711, int(Number(tx.webOrderLineItemId) || 0)),
      field(1719, int(0)),
      ...(tx.revocationDate ? [field(1712, ia5Date(tx.revocationDate))] : []),
    ],
  });
}

/** The receipt's base64, for the app `bundleId` holding these transactions. */
export function encodeAppReceipt(chain: Chain, bundleId: string, environment: string, txs: Transaction[]): string {
  const payload = new asn1.DERSet({
    array: [
      field(0, utf8(environment === 'Sandbox' ? 'ProductionSandbox' : 'Production')),
      field(2, utf8(bundleId)),
      field(3, utf8('1')),
      field(4, new asn1.DEROctetString({ hex: crypto.randomBytes(16).toString('hex') })),
      field(5, new asn1.DEROctetString({ hex: crypto.randomBytes(20).toString('hex') })),
      field(12, ia5Date(Date.now())),
      field(19, utf8('1.0')),
      ...txs.map((tx) => field(17, inAppRecord(tx))),
    ],
  }).tohex();
  const signed = new KJUR.asn1.cms.SignedData({
    version: 1,
    hashalgs: ['sha256'],
    econtent: { type: 'data', content: { hex: payload } },
    certs: [chain.leaf_pem, chain.intermediate_pem],
    sinfos: [
      {
        version: 1,
        id: { type: 'isssn', cert: chain.leaf_pem },
        hashalg: 'sha256',
        sattrs: {
          array: [
            { attr: 'contentType', type: 'data' },
            {
              attr: 'messageDigest',
              hex: crypto.createHash('sha256').update(Buffer.from(payload, 'hex')).digest('hex'),
            },
          ],
        },
        sigalg: 'SHA256withECDSA',
        signkey: chain.leaf_key_pem,
      },
    ],
  } as never);
  return Buffer.from(signed.getContentInfoEncodedHex(), 'hex').toString('base64');
}

/**
 * POST /__control/app-receipt `{transaction_id, account?}`: the app receipt of the device that
 * made this purchase, as StoreKit 1 hands it to the app: the account's bundle id and one in-app
 * record per transaction of its customer (the Apple Account that bought it) in this app and
 * environment: this purchase's first transaction and every renewal, and the customer's other
 * purchases (a restore on a device), oldest first.
 */
export function appReceipt(
  store: EmulatorStore,
  chain: Chain,
  params: Record<string, unknown>,
): Record<string, unknown> {
  const account = pickAccount(store, params.account);
  const id = typeof params.transaction_id === 'string' ? params.transaction_id : '';
  if (!id) throw Object.assign(new Error('transaction_id is required'), { status: 400 });
  const tx = transactions(store).find(
    (t) => t.account === account.account && (t.transactionId === id || t.originalTransactionId === id),
  );
  if (!tx) throw Object.assign(new Error(`no transaction ${id} for ${account.account}`), { status: 404 });
  const purchase = transactions(store)
    .filter(
      (t) =>
        t.account === account.account &&
        t.environment === tx.environment &&
        (t.originalTransactionId === tx.originalTransactionId ||
          (tx.customer !== undefined && t.customer === tx.customer)),
    )
    .sort((a, b) => a.purchaseDate - b.purchaseDate);
  return {
    receipt: encodeAppReceipt(chain, account.bundle_id, tx.environment, purchase),
    bundle_id: account.bundle_id,
    transaction_ids: purchase.map((t) => t.transactionId),
  };
}
