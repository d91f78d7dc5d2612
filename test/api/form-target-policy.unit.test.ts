import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, policyWithFormTarget } from '../../api/dashboard/security-headers';

/**
 * The consent page's policy (api/dashboard/security-headers.ts): its form's answer redirects to the
 * assistant, so that one address joins `form-action` (test/e2e/assistant-consent.test.ts shows a
 * browser following it); nothing else changes, and an address that cannot be named safely adds nothing.
 */
describe('the consent page lets its form reach the assistant, and only it', () => {
  const formAction = (p: string | undefined) => p && /form-action ([^;]+)/.exec(p)![1];

  it('adds the redirect’s origin, or an app’s own scheme', () => {
    expect(formAction(policyWithFormTarget('http://127.0.0.1:51234/callback?x=1'))).toBe(
      "'self' http://127.0.0.1:51234",
    );
    expect(formAction(policyWithFormTarget('http://[::1]:8080/cb'))).toBe("'self' http://[::1]:8080");
    expect(formAction(policyWithFormTarget('https://assistant.example/oauth/callback'))).toBe(
      "'self' https://assistant.example",
    );
    expect(formAction(policyWithFormTarget('cursor://anysphere.cursor-retrieval/oauth/callback'))).toBe(
      "'self' cursor:",
    );
    const p = policyWithFormTarget('http://127.0.0.1:1/cb')!;
    expect(p.replace(' http://127.0.0.1:1', '')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('adds nothing for a script, data or file address, or one that does not parse', () => {
    for (const bad of [
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      'not a url',
      'http://a b; script-src *',
    ])
      expect([bad, policyWithFormTarget(bad)]).toEqual([bad, undefined]);
  });
});
