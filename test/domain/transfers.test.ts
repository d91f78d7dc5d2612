import { describe, expect, it } from 'vitest';
import { registrationRefusal, type StorePurchaseRead } from '../../domain/store-purchase';
import {
  decideTransfer,
  MAX_PENDING_TRANSFERS,
  relinkOutcome,
  restoreOutcome,
  undoUntil,
  type RestoreBehavior,
  type RestoreOutcome,
  type TransferStatus,
} from '../../domain/transfers';

describe('restoreOutcome: what a registration of a purchase someone holds does', () => {
  it.each<[string, RestoreBehavior, string | null, string, number, RestoreOutcome]>([
    ['nobody holds it', 'keep_with_original', null, 'b', 0, 'proceed'],
    ['the caller holds it', 'review', 'b', 'b', 0, 'proceed'],
    ['another holds it, keep', 'keep_with_original', 'a', 'b', 0, 'refuse'],
    ['another holds it, transfer', 'transfer', 'a', 'b', 0, 'transfer'],
    ['another holds it, review', 'review', 'a', 'b', 0, 'review'],
    ['another holds it, review queue full', 'review', 'a', 'b', MAX_PENDING_TRANSFERS, 'refuse'],
    ['another holds it, transfer ignores the review queue', 'transfer', 'a', 'b', MAX_PENDING_TRANSFERS, 'transfer'],
  ])('%s', (_name, policy, holder, caller, pendingCount, expected) => {
    expect(restoreOutcome({ policy, holder, caller, pendingCount })).toBe(expected);
  });
});

describe('relinkOutcome: a web purchase whose events name another app user', () => {
  it.each<[string, RestoreBehavior, string | null, string | null, boolean, RestoreOutcome]>([
    ['the events name nobody', 'transfer', 'a', null, false, 'proceed'],
    ['no holder yet', 'transfer', null, 'b', false, 'proceed'],
    ['the holder named again', 'transfer', 'a', 'a', true, 'proceed'],
    ['another named, keep', 'keep_with_original', 'a', 'b', false, 'refuse'],
    ['another named, transfer', 'transfer', 'a', 'b', false, 'transfer'],
    ['another named, review', 'review', 'a', 'b', false, 'review'],
    ['another named, transfer already undone', 'transfer', 'a', 'b', true, 'refuse'],
    ['another named, review already rejected', 'review', 'a', 'b', true, 'refuse'],
  ])('%s', (_name, policy, holder, named, decidedAgainst, expected) => {
    expect(relinkOutcome({ policy, holder, named, decidedAgainst })).toBe(expected);
  });
});

describe('decideTransfer: approve, reject and undo by status', () => {
  const now = '2026-01-02T00:00:00.000Z';
  const open = '2026-01-03T00:00:00.000Z';
  const past = '2026-01-01T00:00:00.000Z';
  it.each<[TransferStatus, 'approve' | 'reject' | 'undo', string | null, boolean, string]>([
    ['pending', 'approve', null, false, 'completed'],
    ['pending', 'reject', null, false, 'rejected'],
    ['pending', 'undo', null, false, 'transfer_not_completed'],
    ['completed', 'approve', open, false, 'transfer_not_pending'],
    ['completed', 'reject', open, false, 'transfer_not_pending'],
    ['completed', 'undo', open, false, 'undone'],
    ['completed', 'undo', now, false, 'undone'],
    ['completed', 'undo', past, false, 'transfer_undo_expired'],
    ['completed', 'undo', open, true, 'transfer_undo_expired'],
    ['completed', 'undo', null, false, 'transfer_undo_expired'],
    ['rejected', 'approve', null, false, 'transfer_not_pending'],
    ['rejected', 'undo', null, false, 'transfer_not_completed'],
    ['undone', 'undo', open, false, 'transfer_not_completed'],
    ['undone', 'reject', open, false, 'transfer_not_pending'],
  ])('%s + %s (undo_until %s, closed %s) → %s', (status, decision, until, closed, expected) => {
    const v = decideTransfer({ status, undo_until: until, window_closed: closed }, decision, now);
    expect(v.ok ? v.next : v.code).toBe(expected);
  });
});

describe('undoUntil', () => {
  it('adds the hours (fractions too: a test window of seconds), 0 is the moment itself', () => {
    const at = '2026-01-01T00:00:00.000Z';
    expect(undoUntil(at, 72)).toBe('2026-01-04T00:00:00.000Z');
    expect(undoUntil(at, 0)).toBe(at);
    expect(undoUntil(at, 0.001)).toBe('2026-01-01T00:00:03.600Z');
  });
});

describe('registrationRefusal under a moving policy', () => {
  const read: StorePurchaseRead = {
    provider: 'store_android',
    purchase_key: 'k',
    store_product_id: 'p',
    store_app_user: 'a',
    is_sandbox: true,
    state: 'active',
    expires_at: null,
    acknowledged: true,
    read_at: '2026-01-01T00:00:00.000Z',
  };
  it('the buyer the store names is refused only under keep_with_original; the key mode still is', () => {
    expect(registrationRefusal(read, 'test', 'b')?.error).toBe('purchase_token_reused');
    expect(registrationRefusal(read, 'test', 'b', 'keep_with_original')?.error).toBe('purchase_token_reused');
    expect(registrationRefusal(read, 'test', 'b', 'transfer')).toBeNull();
    expect(registrationRefusal(read, 'test', 'b', 'review')).toBeNull();
    expect(registrationRefusal(read, 'live', 'b', 'transfer')?.error).toBe('invalid_purchase');
    expect(registrationRefusal({ ...read, state: 'pending' }, 'test', 'b', 'transfer')?.error).toBe('purchase_pending');
  });
});
