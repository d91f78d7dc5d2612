import { ReceiptUtility } from '@apple/app-store-server-library';

/**
 * A StoreKit 1 app receipt (base64 of the PKCS#7 container on the device) is never believed:
 * Apple's documented way off the retired verifyReceipt endpoint is to take one transaction id
 * out of it (`ReceiptUtility.extractTransactionIdFromAppReceipt`, which walks the ASN.1 and
 * checks no signature) and read that transaction from the App Store Server API, whose signed
 * answer is what counts. A receipt from another app names a transaction our credential's app
 * does not have, and Apple answers 404.
 *
 * Answers the id, or null for anything that is not a receipt with an in-app purchase (the
 * parser throws on most garbage; anything it returns must still look like Apple's numeric
 * transaction ids before it is sent anywhere).
 */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const TRANSACTION_ID = /^\d{1,20}$/;

export function transactionIdOfAppReceipt(receipt: string): string | null {
  if (!BASE64.test(receipt)) return null;
  let id: string | null;
  try {
    id = new ReceiptUtility().extractTransactionIdFromAppReceipt(receipt);
  } catch {
    return null;
  }
  return id !== null && TRANSACTION_ID.test(id) ? id : null;
}
