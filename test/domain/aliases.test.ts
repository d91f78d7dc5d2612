import { describe, expect, it } from 'vitest';
import { identifyOutcome, MAX_ALIASES, mergeVerdict, type MergeFacts } from '../../domain/aliases';

const anon = '$RCAnonymousID:0123456789abcdef0123456789abcdef';

describe('identifyOutcome: one rule for both client APIs', () => {
  it.each<[string, string, string, 'alias' | 'none']>([
    ['anonymous → identified', anon, 'user-1', 'alias'],
    ['identified → identified', 'user-1', 'user-2', 'none'],
    ['the same id', 'user-1', 'user-1', 'none'],
    ['anonymous → anonymous', anon, '$RCAnonymousID:ffffffffffffffffffffffffffffffff', 'none'],
    ['identified → anonymous', 'user-1', anon, 'none'],
  ])('%s', (_name, from, to, expected) => {
    expect(identifyOutcome(from, to)).toBe(expected);
  });
});

describe("mergeVerdict: the tenant's backend merging two identified users", () => {
  const facts = (f: Partial<MergeFacts>): MergeFacts => ({
    from: 'a',
    into: 'b',
    fromAliasOf: null,
    intoAliasOf: null,
    aliasesAfter: 1,
    ...f,
  });
  it('allows a first merge, and answers one already made as done', () => {
    expect(mergeVerdict(facts({}))).toEqual({ ok: true, already: false });
    expect(mergeVerdict(facts({ fromAliasOf: 'b' }))).toEqual({ ok: true, already: true });
  });
  it.each<[string, Partial<MergeFacts>, number, string, string]>([
    ['into itself', { into: 'a' }, 400, 'invalid_request', 'from_app_user_id'],
    ['into an id merged elsewhere', { intoAliasOf: 'c' }, 409, 'customer_already_merged', 'app_user_id'],
    ['an id merged elsewhere', { fromAliasOf: 'c' }, 409, 'customer_already_merged', 'from_app_user_id'],
    ['past the bound', { aliasesAfter: MAX_ALIASES + 1 }, 409, 'too_many_aliases', 'from_app_user_id'],
  ])('refuses a merge %s', (_name, f, status, code, param) => {
    expect(mergeVerdict(facts(f))).toMatchObject({ ok: false, status, code, param });
  });
  it('allows exactly the bound', () => {
    expect(mergeVerdict(facts({ aliasesAfter: MAX_ALIASES }))).toEqual({ ok: true, already: false });
  });
});
