import type Koa from 'koa';
import type { Mode, ProviderId } from '../../domain/providers';
import type { RateLimitSettings } from './rate-limit';

/**
 * The contract between the shared emulator host (emulators/common/host.ts) and one
 * provider's emulator. The host owns the port, the fault injection and the /__control API
 * (docs/emulators.md, "Control API"); the module owns the provider's real API.
 */
export interface EmulatorStore {
  /** Every object by kind, e.g. { products: [...], prices: [...] }. Mutate through helpers and call save(). */
  kinds: Record<string, Record<string, unknown>[]>;
  list(kind: string): Record<string, unknown>[];
  insert<T extends Record<string, unknown>>(kind: string, obj: T): T;
  find(kind: string, pred: (o: Record<string, unknown>) => boolean): Record<string, unknown> | undefined;
  /** Persist (debounced) when the emulator was given a state file. */
  save(): void;
  /** Write a pending save now (the host calls it on close, so a restart sees every change). */
  flush(): void;
}

export interface SendEventParams {
  type: string;
  target: string;
  account?: string;
  data?: Record<string, unknown>;
  id?: string;
  signature?: 'bad';
}

/** POST /__control/checkout: a customer completes the hosted checkout (docs/emulators.md). */
export interface CheckoutParams {
  sku: string;
  email: string;
  target: string;
  mode?: 'live' | 'test';
  trial_days?: number;
  account?: string;
  app_user_id?: string;
  /** The buyer's country (ISO 3166-1 alpha-2) the checkout collected (psp_a: the customer's, invoice's address). */
  country?: string;
}

export interface EmulatorModule {
  provider: ProviderId;
  /** Koa middleware serving the provider's own API (everything outside /__control). */
  api: Koa.Middleware;
  /** POST /__control/events */
  sendEvent(params: SendEventParams): Promise<{ id: string; status: number }>;
  /** POST /__control/checkout (web emulators) */
  checkout?(params: CheckoutParams): Promise<{
    subscription_id: string;
    customer_id: string;
    events: { id: string; type: string; status: number }[];
  }>;
  /** POST /__control/sandbox-purchase (stores) */
  sandboxPurchase?(params: { product_id: string; app_user_id?: string }): Promise<Record<string, unknown>>;
  /**
   * The App Store: the mode of the key a Server API request is signed with (unverified: only to
   * count it against its environment's allowance), or null when it names no known key.
   */
  keyMode?(ctx: Koa.Context): Mode | null;
  /** Extra control routes a provider needs (e.g. POST /__control/accounts to seed a connected account). */
  control?: Record<string, (body: Record<string, unknown>) => Promise<unknown> | unknown>;
}

export interface EmulatorOptions {
  port: number; // 0 = any free port (tests)
  host?: string; // default 127.0.0.1
  stateFile?: string; // durable state across the emulator's own restart
  /** Public URL of this emulator (for hosted checkout / OAuth pages); defaults to http://host:port. */
  publicUrl?: string;
  /** Enforce the provider's documented rate limit from the start (default off; see rate-limit.ts). */
  rateLimit?: RateLimitSettings;
}

export type EmulatorFactory = (store: EmulatorStore, ctx: { publicUrl: () => string }) => EmulatorModule;
