import type { ProviderId } from '../../domain/providers';
import { paddleAccountRef } from '../../providers/psp_b/webhook';

/**
 * The connected account an inbound event names, read before its signature can be checked
 * (the account says whose signing secret to check it with). Nothing else is trusted until then.
 */
export function peekAccount(provider: ProviderId, raw: Buffer): string | null {
  try {
    if (provider === 'psp_b') return paddleAccountRef(raw);
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    const v = provider === 'psp_a' ? body.account : provider === 'psp_c' ? body.account_id : undefined;
    return typeof v === 'string' && v !== '' ? v : null;
  } catch {
    return null;
  }
}

/** Providers whose webhooks the receiver takes today (the stores' notifications go through purchase re-reads). */
export const RECEIVING: readonly ProviderId[] = ['psp_a', 'psp_b', 'psp_c'];
