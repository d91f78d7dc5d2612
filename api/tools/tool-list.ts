import { OPERATIONS } from '../../operations';
import type { Operation, ToolDeclaration } from '../../operations/types';

export interface ToolEntry extends ToolDeclaration {
  /** The operation the tool runs: the same scope check, validation, handler and audit as REST. */
  operation: Operation;
}

/**
 * Every tool the tool server offers, in `tools/list` order (the operation table's): each one is
 * the `tool` an operation declares beside its handler (its name, description and annotations,
 * operations/types.ts `ToolDeclaration`), so this list is never edited by hand.
 */
export const TOOL_LIST: readonly ToolEntry[] = OPERATIONS.filter((op) => op.tool).map((op) => ({
  ...op.tool!,
  operation: op,
}));
