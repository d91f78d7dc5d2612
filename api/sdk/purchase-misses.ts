import { sha256Hex } from '../../providers/purchase-ref';

/**
 * Purchase tokens the store answered 404 for are remembered per tenant for a short while
 * (db/store-purchase-misses.ts). The same unknown token sent again is then refused from there,
 * with no workflow and no store call. Short, because a store can be a moment behind a purchase
 * the device has just made.
 */
export const MISS_TTL_SECONDS = 120;

/**
 * The cache key: what the app sent, hashed (the cache never holds a token in clear), with the
 * store connection and the key's mode it was asked with — the store's answer depends on the
 * credential (a test credential does not see a real purchase that the live one does).
 */
export const missKey = (
  connectionId: string,
  mode: 'test' | 'live',
  body:
    | { provider: 'store_android'; purchase_token: string }
    | { provider: 'store_ios'; signed_transaction: string }
    | { provider: 'store_ios'; transaction_id: string },
) =>
  sha256Hex(
    `${connectionId}:${mode}:${
      'purchase_token' in body
        ? body.purchase_token
        : 'signed_transaction' in body
          ? body.signed_transaction
          : `transaction:${body.transaction_id}`
    }`,
  );
