import { describe, expect, it } from 'vitest';
import { mayAct, mayOpen } from '../../api/dashboard/page-access';
import { mayAssignRole, ROLES, scopesOfRole, type Role } from '../../domain/roles';
import { SCOPES } from '../../domain/scopes';
import { OPERATIONS } from '../../operations';
import type { UserActor } from '../../operations/actor';
import { refusalFor } from '../../operations/policy';

const person = (role: Role): UserActor => ({ kind: 'user', tenantId: 't', userId: 'u', role });
const allowed = (role: Role) =>
  OPERATIONS.filter((op) => refusalFor(person(role), op, 'dashboard') === undefined).map((op) => op.name);
const names = (pick: (op: (typeof OPERATIONS)[number]) => boolean) => OPERATIONS.filter(pick).map((op) => op.name);
const team = (op: (typeof OPERATIONS)[number]) => op.scope === 'account' && op.accountArea === 'team';
const approvals = (op: (typeof OPERATIONS)[number]) => op.scope === 'account' && op.accountArea === 'approvals';
const reads = (op: (typeof OPERATIONS)[number]) => !op.write && op.scope !== 'account';
/** Connecting, listing and disconnecting one's own assistants: every role (what they may do is bounded by it). */
const ownAssistants = (op: (typeof OPERATIONS)[number]) => op.scope === 'account' && op.accountArea === 'assistants';

describe('what each role may run (domain/roles.ts, read by operations/policy.ts)', () => {
  it('owners and admins run every operation', () => {
    expect(allowed('owner')).toEqual(names(() => true));
    expect(allowed('admin')).toEqual(names(() => true));
  });

  it('a developer runs everything but the team, approvals and grants: keys, credentials, webhooks, providers, products', () => {
    expect(allowed('developer')).toEqual(
      names(
        (op) =>
          !team(op) &&
          !approvals(op) &&
          op.scope !== 'grants:write' &&
          op.scope !== 'customers:write' &&
          op.scope !== 'customers:erase',
      ),
    );
    expect(allowed('developer')).toEqual(
      expect.arrayContaining(['api_keys.create', 'providers.connect', 'products.create', 'webhook_endpoints.create']),
    );
    // No access grants: a developer's scopes carry no grant-writing scope whatever the table grows to.
    expect(scopesOfRole('developer').filter((s) => s.startsWith('grants:') && !s.endsWith(':read'))).toEqual([]);
  });

  it('support and viewers read, support grants access by hand and writes notes; neither touches keys, credentials, the team or the catalogue', () => {
    expect(allowed('viewer')).toEqual(names((op) => reads(op) || ownAssistants(op)));
    expect(allowed('support')).toEqual(
      names(
        (op) =>
          reads(op) ||
          ownAssistants(op) ||
          ['grants:write', 'imports:write', 'customers:write', 'transfers:write'].includes(op.scope as string),
      ),
    );
    expect(allowed('support')).toEqual(
      expect.arrayContaining([
        'grants.create',
        'grants.revoke',
        'customers.refresh',
        'transfers.approve',
        'transfers.undo',
      ]),
    );
    // Deciding a transfer is support's and above; a viewer reads transfers only.
    expect(allowed('viewer')).toEqual(expect.arrayContaining(['transfers.list', 'transfers.get']));
    expect(allowed('viewer')).not.toContain('transfers.approve');
    for (const role of ['support', 'viewer'] as const) {
      expect(allowed(role)).not.toContain('api_keys.create');
      expect(allowed(role)).not.toContain('products.create');
    }
  });

  it('exports: developers and above start one; every role reads exports, digests and a customer’s events', () => {
    const may = (name: string) =>
      ROLES.filter(
        (r) =>
          refusalFor(
            person(r),
            OPERATIONS.find((op) => op.name === name)!,
            'dashboard',
          ) === undefined,
      );
    expect(may('exports.create')).toEqual(['owner', 'admin', 'developer']);
    for (const name of ['exports.get', 'exports.download', 'digests.get', 'customers.events'])
      expect([name, may(name)]).toEqual([name, [...ROLES]]);
  });

  it('a refusal is a 403 that says why, on every surface', () => {
    const create = OPERATIONS.find((op) => op.name === 'products.create')!;
    const refusal = refusalFor(person('viewer'), create, 'dashboard');
    expect([refusal?.status, refusal?.code, refusal?.detail]).toEqual([
      403,
      'insufficient_scope',
      'Your role in this account does not allow this; ask an owner or an admin.',
    ]);
  });

  it('every read scope reaches every role; only owners and admins hold every scope', () => {
    for (const role of ROLES)
      for (const s of SCOPES.filter((x) => x.endsWith(':read'))) expect(scopesOfRole(role)).toContain(s);
    expect(scopesOfRole('owner')).toEqual([...SCOPES]);
    expect(scopesOfRole('viewer').every((s) => s.endsWith(':read'))).toBe(true);
  });

  it('only an owner hands out, changes or removes the owner role', () => {
    expect(ROLES.filter((r) => mayAssignRole('owner', r))).toEqual([...ROLES]);
    expect(ROLES.filter((r) => mayAssignRole('admin', r))).toEqual(['admin', 'developer', 'support', 'viewer']);
    for (const role of ['developer', 'support', 'viewer'] as const)
      expect(ROLES.filter((r) => mayAssignRole(role, r))).toEqual([]);
  });
});

describe('what each role may open in the dashboard (api/dashboard/page-access.ts)', () => {
  it('keys and provider credentials: owners, admins and developers only', () => {
    for (const path of ['/settings/developer-api', '/providers', '/providers/abc'])
      expect([path, ROLES.filter((r) => mayOpen(r, path))]).toEqual([path, ['owner', 'admin', 'developer']]);
  });

  it('the team: owners and admins only', () => {
    expect(ROLES.filter((r) => mayOpen(r, '/settings/team'))).toEqual(['owner', 'admin']);
    expect(ROLES.filter((r) => mayAct(r, '/settings/team/invitations'))).toEqual(['owner', 'admin']);
  });

  it('products: everyone reads, owners, admins and developers change', () => {
    expect(ROLES.filter((r) => mayOpen(r, '/products'))).toEqual([...ROLES]);
    expect(ROLES.filter((r) => mayOpen(r, '/products/new'))).toEqual(['owner', 'admin', 'developer']);
    expect(ROLES.filter((r) => mayAct(r, '/products'))).toEqual(['owner', 'admin', 'developer']);
    // Erasing a customer's personal data cannot be undone: owners and admins only (customers:erase).
    expect(ROLES.filter((r) => mayAct(r, '/customers/erase'))).toEqual(['owner', 'admin']);
  });

  it('imports: everyone sees them, owners, admins, developers and support start one (a viewer does not)', () => {
    for (const path of ['/imports', '/imports/abc'])
      expect([path, ROLES.filter((r) => mayOpen(r, path))]).toEqual([path, [...ROLES]]);
    for (const path of ['/imports/provider', '/imports/file'])
      expect([path, ROLES.filter((r) => mayAct(r, path))]).toEqual([path, ['owner', 'admin', 'developer', 'support']]);
  });
});
