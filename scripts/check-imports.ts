/**
 * The folder rules of docs/architecture.md, checked: each production folder imports only the
 * folders listed for it, and no file takes part in an import cycle. With them, the data layer's
 * rules of docs/data-layer.md that a program can see: nothing but db/migrate.ts imports a
 * migration, objection stays in db/models/ and its models in db/, and SQL text is never glued
 * together with `+`. Type-only imports count
 * for the folder rule except where noted (a workflow names its activities' types, as
 * Temporal's samples do). Cycles count type imports too: a type cycle still ties two files
 * together for a reader, and it becomes a run-time cycle with the first value import.
 *
 * `npm run -s lint:imports` prints every breach and exits 1 when there is one.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { isEntryPoint } from './entry';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** Folder → folders it may import at run time (its own folder always allowed). */
export const ALLOWED: Record<string, string[]> = {
  domain: [],
  runtime: ['domain'],
  egress: ['domain'],
  vault: ['domain'],
  db: ['domain', 'runtime', 'vault'],
  providers: ['domain', 'vault', 'egress'],
  workflows: ['domain'],
  activities: ['domain', 'db', 'providers', 'runtime', 'vault', 'egress'],
  temporal: ['domain', 'db', 'providers', 'runtime', 'vault', 'egress', 'activities', 'workflows'],
  operations: ['domain', 'db', 'providers', 'runtime', 'vault', 'egress', 'temporal'],
  api: ['domain', 'db', 'providers', 'runtime', 'vault', 'egress', 'temporal', 'operations'],
  emulators: ['domain', 'runtime'],
  seed: ['domain', 'db', 'runtime', 'providers', 'vault', 'egress'],
  sdk: [],
  // The CI client (docs/ci.md) talks to the service over its public REST API only.
  cli: ['domain'],
  examples: ['sdk'],
  scripts: [
    'domain',
    'db',
    'runtime',
    'vault',
    'providers',
    'egress',
    'temporal',
    'operations',
    'api',
    'activities',
    'workflows',
    'emulators',
    'seed',
  ],
};
/** Type-only imports a folder may make on top of ALLOWED. */
export const TYPE_ONLY: Record<string, string[]> = {
  workflows: ['activities', 'providers'],
  db: ['providers'],
  vault: ['runtime'],
  providers: ['runtime'],
  operations: ['workflows', 'activities'],
  api: ['workflows', 'activities'],
};

export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
  /** Value names imported (type-only specifiers left out). */ names: string[];
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(rel));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.normalize(path.join(path.dirname(from), spec));
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && fs.existsSync(path.join(ROOT, candidate))) return candidate;
  }
  return null;
}

/** A bare import: a package, by name (`objection`, `knex`, `node:fs`). */
export interface PackageImport {
  from: string;
  name: string;
}

function importsOf(file: string, packages: PackageImport[] = []): Edge[] {
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(path.join(ROOT, file), 'utf8'),
    ts.ScriptTarget.ES2022,
    false,
  );
  const edges: Edge[] = [];
  for (const stmt of source.statements) {
    let spec: string | undefined;
    let typeOnly = false;
    let names: string[] = [];
    if (ts.isImportDeclaration(stmt) && ts.isStringLiteral(stmt.moduleSpecifier)) {
      spec = stmt.moduleSpecifier.text;
      const clause = stmt.importClause;
      if (clause && !clause.isTypeOnly) {
        if (clause.name) names.push('default');
        const nb = clause.namedBindings;
        if (nb && ts.isNamespaceImport(nb)) names.push('*');
        if (nb && ts.isNamedImports(nb))
          names = names.concat(nb.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text));
      }
      typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
    } else if (ts.isExportDeclaration(stmt) && stmt.moduleSpecifier && ts.isStringLiteral(stmt.moduleSpecifier)) {
      spec = stmt.moduleSpecifier.text;
      typeOnly = stmt.isTypeOnly;
      if (!typeOnly) names.push('*');
    }
    const to = spec ? resolve(file, spec) : null;
    if (to) edges.push({ from: file, to, typeOnly, names });
    else if (spec && !spec.startsWith('.')) packages.push({ from: file, name: spec });
  }
  return edges;
}

const folderOf = (file: string) => file.split(path.sep)[0];

/** Strongly connected components with more than one file (Tarjan), type imports included. */
function cycles(files: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) next.get(e.from)?.push(e.to);
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return found;
}

/** Where SQL may be written: repositories in db/, plus migrations' own folder. */
const SQL_HOMES = new Set(['db']);
/** Folders held to "no SQL here". scripts/ and seed/ are operator tools and may query directly. */
const SQL_FOLDERS_CHECKED = [
  'operations',
  'api',
  'activities',
  'workflows',
  'temporal',
  'providers',
  'domain',
  'runtime',
];
const QUERY_ROOTS = new Set(['trx', 'tx', 'db', 'knex', 'owner']);

/** `trx('table')`, `db('table')` and `x.raw(...)` outside db/: SQL that belongs in a repository. */
function sqlCalls(file: string): string[] {
  if (SQL_HOMES.has(folderOf(file))) return [];
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(path.join(ROOT, file), 'utf8'),
    ts.ScriptTarget.ES2022,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const tableCall =
        ts.isIdentifier(callee) &&
        QUERY_ROOTS.has(callee.text) &&
        node.arguments.length > 0 &&
        ts.isStringLiteralLike(node.arguments[0]);
      const rawCall = ts.isPropertyAccessExpression(callee) && callee.name.text === 'raw';
      const builderCall =
        ts.isPropertyAccessExpression(callee) &&
        ['from', 'into', 'table', 'select', 'insert', 'update', 'del', 'delete'].includes(callee.name.text) &&
        ts.isIdentifier(callee.expression) &&
        QUERY_ROOTS.has(callee.expression.text);
      if (tableCall || rawCall || builderCall) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(`${file}:${line} runs SQL (${node.getText().slice(0, 40).replace(/\s+/g, ' ')}…): SQL lives in db/`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The surfaces (dashboard pages, the tool server) read and write only through operations: from
 * db/ they may import the mechanics of signing in and nothing else, so every read a page shows
 * and every write it makes is an operation (operations/), with the policy (and, for a write, the
 * audit) that brings. What remains here, and why, is docs/architecture.md's "The surfaces and db/".
 */
export const SURFACE_DB_IMPORTS: Record<string, string[]> = {
  // Signing up, logging in, accepting an invitation and the overview's sign-in notice run in the
  // person's tenant before (or beside) any operation: there is no actor yet, or it is the session's own row.
  'db/tenant-tx.ts': ['withTenant'],
  // The session: who the cookie is, signing in and out.
  'db/dashboard-users.ts': [
    'sessionUser',
    'createSession',
    'deleteSession',
    'findUserForLogin',
    'signUpUser',
    'EmailTaken',
  ],
  'db/login-attempts.ts': ['clearAttempts', 'releaseAttempt', 'reserveAttempt'],
  // Log-in's own bookkeeping: wrong passwords told to the member at their next log-in (docs/limits.md).
  'db/sign-in-failures.ts': ['noteSignInFailure', 'takeSignInFailures', 'sessionSignInFailures'],
  // A secret parked on the session for the one page after a redirect (a new key, a new endpoint secret).
  'db/session-secret.ts': ['parkSecret', 'takeSecret'],
  // Accepting an invitation is a session mechanic like signing up (docs/team.md).
  'db/team.ts': ['invitationTenant', 'findLiveInvitation', 'acceptInvitation', 'InviterMayNotGiveRole'],
  // Signing up, in and out, and the page gate's refusal, run before there is an operation to run; they
  // are audited under the operations' vocabulary (account.sign_up, account.log_in, dashboard.page).
  'db/audit.ts': ['recordUserAudit'],
  // The authorization server's storage (assistants sign in, docs/assistant-sign-in.md): its records are
  // read and written by the library before there is a person or an assistant; the consent itself is an operation.
  'db/oauth-records.ts': ['OAuthRecords'],
};
const SURFACE_FOLDERS = ['api/dashboard/', 'api/tools/', 'api/oauth/'];

export function surfaceWrites(edges: Edge[]): string[] {
  const problems: string[] = [];
  for (const e of edges) {
    if (!SURFACE_FOLDERS.some((f) => e.from.startsWith(f)) || folderOf(e.to) !== 'db' || e.typeOnly) continue;
    const allowed = SURFACE_DB_IMPORTS[e.to] ?? [];
    for (const name of e.names.filter((n) => !allowed.includes(n))) {
      problems.push(
        `${e.from} imports ${name} from ${e.to}: a surface reads and writes through operations/ only (the sign-in mechanics it may import: scripts/check-imports.ts, SURFACE_DB_IMPORTS)`,
      );
    }
  }
  return problems;
}

/** The migrations' shared helper (the tenant table policies), which migrations may import. */
const MIGRATION_HELPERS = ['db/migrations/tenant-policies.ts'];

/**
 * Nothing at run time imports a migration but their generated list (db/migrations/index.ts). A value a
 * process needs (a column list, a vocabulary) lives in domain/ or db/ and the migration spells
 * it out (a migration is frozen history; tests compare the two); a migration that remakes an
 * earlier one's function holds that SQL itself rather than calling the earlier file's generator.
 */
export function migrationImports(edges: Edge[]): string[] {
  return edges
    .filter(
      (e) =>
        e.to.startsWith('db/migrations/') &&
        !MIGRATION_HELPERS.includes(e.to) &&
        e.from !== 'db/migrations/index.ts' &&
        !(e.from === 'db/migrate.ts' && e.to === 'db/migrations/index.ts'),
    )
    .map(
      (e) =>
        `${e.from} imports ${e.to}: nothing but their generated list, db/migrations/index.ts, imports a migration (docs/data-layer.md, "One SQL rule")`,
    );
}

/**
 * objection has one role (docs/data-layer.md, "One SQL rule"): a record read with its relations,
 * in db/. The package is imported by db/models/ only, and the models by db/ only.
 */
export function modelImports(edges: Edge[], packages: PackageImport[]): string[] {
  const problems: string[] = [];
  for (const p of packages)
    if ((p.name === 'objection' || p.name.startsWith('objection/')) && !p.from.startsWith('db/models/'))
      problems.push(`${p.from} imports objection: only db/models/ does (docs/data-layer.md, "One SQL rule")`);
  for (const e of edges)
    if (e.to.startsWith('db/models/') && folderOf(e.from) !== 'db')
      problems.push(`${e.from} imports ${e.to}: the models are read through db/ repositories only`);
  return problems;
}

/** Calls whose first argument is SQL text: knex's raw and its *Raw builder methods, a tenant read's rows. */
const SQL_TEXT_CALLS = new Set([
  'raw',
  'rows',
  'whereRaw',
  'orWhereRaw',
  'havingRaw',
  'orderByRaw',
  'groupByRaw',
  'joinRaw',
  'fromRaw',
]);

/**
 * SQL text glued together with `+` (`'… where sku = ' + sku`): the shape a value takes when it is
 * spliced into a statement instead of bound. Values are parameters; text is one literal or one
 * template (docs/data-layer.md, "One SQL rule").
 */
export function sqlConcatenation(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const glued = (node: ts.Expression): boolean =>
    ts.isParenthesizedExpression(node)
      ? glued(node.expression)
      : ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken;
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      SQL_TEXT_CALLS.has(node.expression.name.text) &&
      node.arguments.length > 0 &&
      glued(node.arguments[0])
    ) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(`${file}:${line} builds SQL text with +: bind values as parameters, write the text as one literal`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Where the owner connection (the database's owner: row-level security does not bind it) may be
 * opened, each because RLS must be bypassed there by design. Everything else runs as the login
 * role, or in a tenant transaction (`withTenant`), where RLS holds. A new use is a decision:
 * add it here with its reason (docs/tenancy-and-rls.md, "Roles").
 */
export const OWNER_CONNECTION_USES: Record<string, string> = {
  'db/open-database.ts':
    'the one place connections are made: migrations and provisioning the login role run as the owner',
  'db/migrate-main.ts': '`npm run migrate`: the schema is the owner’s',
  'scripts/start.ts': '`npm start` makes the demo tenant and its login before any tenant transaction can exist',
  'scripts/admin.ts':
    'the operator: tenant:create (no tenant yet), demo, vault:reencrypt (every tenant), token-key:rotate and token-key:withdraw (the deployment’s keys), and finding the tenant a key or workflow id belongs to; its key commands then run the operations in that tenant’s transaction',
};

/** `openDatabase(…, { as: 'owner' })` or a knex made by hand (`createKnex`) outside OWNER_CONNECTION_USES. */
export function ownerConnectionUses(file: string, text: string): string[] {
  if (file in OWNER_CONNECTION_USES) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const callee = node.expression.text;
      const asOwner =
        callee === 'openDatabase' &&
        node.arguments.some(
          (a) =>
            ts.isObjectLiteralExpression(a) &&
            a.properties.some(
              (p) =>
                ts.isPropertyAssignment(p) &&
                p.name.getText(source) === 'as' &&
                ts.isStringLiteralLike(p.initializer) &&
                p.initializer.text === 'owner',
            ),
        );
      if (asOwner || callee === 'createKnex') {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(
          `${file}:${line} opens the owner connection (${callee}), which bypasses row-level security: only the places in scripts/check-imports.ts OWNER_CONNECTION_USES may`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function checkImports(): string[] {
  const files = Object.keys(ALLOWED)
    .filter((d) => fs.existsSync(path.join(ROOT, d)))
    .flatMap(listFiles);
  const packages: PackageImport[] = [];
  const edges = files.flatMap((f) => importsOf(f, packages));
  const problems: string[] = [];
  for (const e of edges) {
    const from = folderOf(e.from);
    const to = folderOf(e.to);
    if (from === to || ALLOWED[from]?.includes(to)) continue;
    if (e.typeOnly && TYPE_ONLY[from]?.includes(to)) continue;
    problems.push(
      `${e.from} imports ${e.to}${e.typeOnly ? ' (types)' : ''}: ${from}/ may import ${[...(ALLOWED[from] ?? []), ...(TYPE_ONLY[from] ?? []).map((t) => `${t} (types)`)].join(', ') || 'nothing outside itself'}`,
    );
  }
  for (const scc of cycles(files, edges)) problems.push(`import cycle: ${scc.join(' → ')}`);
  problems.push(...surfaceWrites(edges));
  problems.push(...migrationImports(edges));
  problems.push(...modelImports(edges, packages));
  for (const file of files) if (SQL_FOLDERS_CHECKED.includes(folderOf(file))) problems.push(...sqlCalls(file));
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    problems.push(...sqlConcatenation(file, text), ...ownerConnectionUses(file, text));
  }
  return problems;
}

if (isEntryPoint(import.meta.url)) {
  const problems = checkImports();
  for (const p of problems) console.log(p);
  if (problems.length) {
    console.log(`\n${problems.length} import rule breach(es); the rules are in docs/architecture.md`);
    process.exit(1);
  }
}
