import { makeApproveChange } from './changes/approve';
import { DECLARED } from './declared';
import type { Operation } from './types';

/** Approval runs the held write by its name through this table (docs/approvals.md). */
export const approveChange = makeApproveChange((name) => OPERATIONS.find((op) => op.name === name && op.write));

/**
 * The operation table: every management operation, once, with the scope it demands. Nothing is
 * listed here by hand: `operations/declared.ts` collects each `defineOperation` of
 * `operations/<resource>/` (scripts/operations-table.ts), and approving a held write is added
 * here because it runs the others by name. REST routes, the OpenAPI document, the tool list
 * (api/tools/tool-list.ts) and the dashboard pages' gate (api/dashboard/page-access.ts) are made
 * from it.
 */
export const OPERATIONS: Operation[] = [...DECLARED, approveChange] as Operation[];
