/**
 * How much one StoreKit 1 app receipt may cost, fixed before any store call: its customer's
 * transaction history is read at most `maxPages` pages deep (Apple sends 20 transactions a page,
 * newest first) and at most `maxPurchases` distinct purchases are registered, the most recent.
 * Each registration spends the app user's registration lane (10 at once, one more every 30
 * seconds: api/sdk/limits.ts) as any other does, and the history read one more: eight purchases
 * and the read fit in one receipt's worth of that lane.
 */
export const APP_RECEIPT_LIMITS = { maxPages: 5, maxPurchases: 8 } as const;
