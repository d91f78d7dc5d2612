import { describe, expect, it } from 'vitest';
import { chooseConnection, type ConnectionOption } from '../../domain/connection-choice';

const conn = (id: string, over: Partial<ConnectionOption> = {}): ConnectionOption => ({
  id,
  label: '',
  account_ref: `acct_${id}`,
  is_default: false,
  is_active: true,
  ...over,
});

describe('chooseConnection', () => {
  it('no active connection: no_connection', () => {
    const r = chooseConnection([conn('a', { is_active: false, is_default: true })], 'psp_a');
    expect(r).toMatchObject({ ok: false, code: 'no_connection', candidates: [] });
  });
  it('omitted account_id: the default, even among several', () => {
    const r = chooseConnection([conn('a'), conn('b', { is_default: true }), conn('c')], 'psp_a');
    expect(r).toMatchObject({ ok: true, connection: { id: 'b' } });
  });
  it('omitted account_id, no default: the only active one', () => {
    const r = chooseConnection([conn('a', { is_active: false }), conn('b')], 'psp_b');
    expect(r).toMatchObject({ ok: true, connection: { id: 'b' } });
  });
  it('omitted account_id, several and no default: ambiguous, naming the candidates', () => {
    const r = chooseConnection([conn('a', { label: 'EU' }), conn('b')], 'psp_c');
    expect(r).toMatchObject({ ok: false, code: 'ambiguous_connection', candidates: [{ id: 'a' }, { id: 'b' }] });
    expect(!r.ok && r.message).toContain('a "EU" (acct_a)');
  });
  it('account_id matches our id or the provider account id, active only', () => {
    const list = [conn('a', { is_default: true }), conn('b'), conn('c', { is_active: false })];
    expect(chooseConnection(list, 'psp_a', 'b')).toMatchObject({ ok: true, connection: { id: 'b' } });
    expect(chooseConnection(list, 'psp_a', 'acct_b')).toMatchObject({ ok: true, connection: { id: 'b' } });
    expect(chooseConnection(list, 'psp_a', 'c')).toMatchObject({
      ok: false,
      code: 'not_found',
      candidates: [{ id: 'a' }, { id: 'b' }],
    });
  });
});
