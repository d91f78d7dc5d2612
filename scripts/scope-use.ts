/**
 * The scope table (domain/scopes.ts) held against the operations' declarations: every operation's
 * scope is in the table, and every scope in the table is some operation's, or says with `carried`
 * why a key carries it anyway. scripts/operations-table.ts runs it after writing the registry
 * (so `npm run checks`, `npm test` and `npm run build` all refuse a scope nothing uses).
 */
import { SCOPE_TABLE } from '../domain/scopes';
import { ACCOUNT } from '../operations/types';

interface Declared {
  name: string;
  scope: string;
}

export function scopeProblems(
  operations: readonly Declared[],
  table: Record<string, { description: string; carried?: string }> = SCOPE_TABLE,
): string[] {
  const problems: string[] = [];
  for (const op of operations)
    if (op.scope !== ACCOUNT && !Object.hasOwn(table, op.scope))
      problems.push(`${op.name}: its scope "${op.scope}" is not in domain/scopes.ts`);
  for (const [scope, { carried }] of Object.entries(table)) {
    const user = operations.find((op) => op.scope === scope);
    if (!user && !carried?.trim())
      problems.push(
        `domain/scopes.ts: no operation declares "${scope}": declare one, remove the scope, or say in \`carried\` why a key carries it`,
      );
    if (user && carried)
      problems.push(`domain/scopes.ts: "${scope}" says \`carried\`, but ${user.name} declares it: drop \`carried\``);
  }
  return problems;
}
