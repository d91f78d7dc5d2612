import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOOL_LIST } from '../../api/tools/tool-list';
import { mayAct, mayOpen } from '../../api/dashboard/page-access';
import { ROLES, roleMay } from '../../domain/roles';
import { OPERATIONS } from '../../operations';
import { dashboardOnly } from '../../operations/types';
import { DECLARED_FILE, declarations, declaredModule } from '../../scripts/operations-table';
import { scopeProblems } from '../../scripts/scope-use';
import { buildOpenApi } from '../../api/openapi';
import { SCOPES, scopeDescription } from '../../domain/scopes';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Each operation declares itself once, beside its handler (docs/architecture.md, "How to add an
 * operation"): the registry, the tool list and the pages' gate are derived from those
 * declarations, and nothing lists them again by hand.
 */
describe('operations declare themselves once', () => {
  it('the registry is every defineOperation of operations/<resource>/, each in its resource’s folder', () => {
    const { found, problems } = declarations();
    expect(problems).toEqual([]);
    // The committed module is what the generator writes now (npm run checks holds it so too).
    expect(fs.readFileSync(DECLARED_FILE, 'utf8')).toBe(declaredModule(found));
    const names = OPERATIONS.map((o) => o.name);
    expect(new Set(names).size).toBe(names.length);
    expect(OPERATIONS.length).toBe(found.length + 1); // + changes.approve, made with the table to run held writes
    for (const op of OPERATIONS) {
      const folder = op.name.split('.')[0].replace(/_/g, '-');
      expect([op.name, fs.existsSync(path.join(ROOT, 'operations', folder))]).toEqual([op.name, true]);
    }
  });

  it('the tool list is exactly the operations that declare a tool, never an account operation', () => {
    expect(TOOL_LIST.map((t) => t.operation)).toEqual(OPERATIONS.filter((o) => o.tool));
    for (const t of TOOL_LIST) {
      expect([t.name, dashboardOnly(t.operation)]).toEqual([t.name, false]);
      expect([t.name, t.annotations.readOnlyHint]).toEqual([t.name, !t.operation.write]);
    }
  });

  it('the scope table and the operations agree: every scope is some operation’s or says why a key carries it', () => {
    expect(scopeProblems(OPERATIONS)).toEqual([]);
    // What the generator refuses (npm run checks runs it): a scope nothing declares and nothing
    // explains, an operation whose scope is not in the table, and a `carried` that is no longer true.
    const ops = [
      { name: 'things.list', scope: 'things:read' },
      { name: 'things.erase', scope: 'things:erase' },
      { name: 'team.list', scope: 'account' },
    ];
    expect(
      scopeProblems(ops, {
        'things:read': { description: 'Read things.' },
        'things:write': { description: 'Change things.' },
        'things:export': { description: 'Export things.', carried: 'a partner reads it' },
      }),
    ).toEqual([
      'things.erase: its scope "things:erase" is not in domain/scopes.ts',
      'domain/scopes.ts: no operation declares "things:write": declare one, remove the scope, or say in `carried` why a key carries it',
    ]);
    expect(
      scopeProblems(ops.slice(0, 1), {
        'things:read': { description: 'Read things.', carried: 'held for an old client' },
      }),
    ).toEqual(['domain/scopes.ts: "things:read" says `carried`, but things.list declares it: drop `carried`']);
  });

  it('the API reference lists every scope with its description, and names one of them on every route', () => {
    const doc = buildOpenApi() as {
      components: { securitySchemes: { bearer: { description: string; 'x-scopes': Record<string, string> } } };
      paths: Record<string, Record<string, { 'x-scope': string }>>;
    };
    const bearer = doc.components.securitySchemes.bearer;
    expect(bearer['x-scopes']).toEqual(Object.fromEntries(SCOPES.map((s) => [s, scopeDescription(s)])));
    for (const s of SCOPES) expect(bearer.description).toContain(`\`${s}\`: ${scopeDescription(s)}`);
    for (const methods of Object.values(doc.paths))
      for (const op of Object.values(methods)) expect(SCOPES).toContain(op['x-scope']);
  });

  it('each dashboard page’s gate is the need of the operation that declares it', () => {
    const gates = OPERATIONS.flatMap((op) => (op.pages ?? []).map((p) => ({ op, ...p })));
    expect(gates.length).toBeGreaterThan(0);
    for (const { op, page, gates: which } of gates) {
      const need = dashboardOnly(op) ? { account: op.accountArea ?? 'credentials' } : { scope: op.scope as never };
      for (const role of ROLES) {
        const may = roleMay(role, need);
        if (which.includes('open')) expect([page, role, mayOpen(role, page)]).toEqual([page, role, may]);
        if (which.includes('act')) expect([page, role, mayAct(role, page)]).toEqual([page, role, may]);
      }
    }
  });
});

describe('names say where things are', () => {
  const serviceFolders = ['api', 'operations', 'db', 'domain', 'runtime', 'temporal', 'activities', 'bench'];
  const files = serviceFolders.flatMap((d) =>
    (fs.readdirSync(path.join(ROOT, d), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(d, f)),
  );

  it('one word for the caller: actor, never principal', () => {
    const using = files.filter((f) => /principal/i.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(using).toEqual([]);
  });

  it('approvals’ hold sits beside the runner: execute.ts reaches into no resource’s folder', () => {
    expect(fs.existsSync(path.join(ROOT, 'operations', 'hold.ts'))).toBe(true);
    const execute = fs.readFileSync(path.join(ROOT, 'operations', 'execute.ts'), 'utf8');
    expect(execute.match(/from '\.\/[\w-]+\/[^']+'/g) ?? []).toEqual([]);
  });
});
