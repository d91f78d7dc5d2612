import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Scope } from '../../domain/scopes';
import type { Principal } from '../auth';
import type { Services } from '../services';

export interface OperationContext {
  principal: Principal;
  tenantId: string;
  requestId: string;
  services: Services;
  log: Logger;
  /** Run DB work as this tenant (RLS transaction). */
  tx<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
}

export interface RestBinding {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path relative to /v1, e.g. `/products/{id}`. */
  path: string;
}

export interface ToolBinding {
  name: `billing_${string}`;
  description: string;
  destructive?: boolean;
  idempotent?: boolean;
}

/**
 * One management operation, declared once. REST routes, tools, the OpenAPI document,
 * scope checks, validation and auditing are all generated from these fields.
 */
export interface Operation<I extends z.ZodType = z.ZodType> {
  name: string;
  summary: string;
  scope: Scope;
  /** Writes are audited (outcome included, refusals too); reads go to the request log only. */
  write: boolean;
  input: I;
  /** Response body schema (documentation and test validation). */
  output: z.ZodType;
  rest?: RestBinding;
  tool?: ToolBinding;
  /** Error responses this operation can give besides the common ones (for OpenAPI). */
  errors?: number[];
  handler(ctx: OperationContext, input: z.infer<I>): Promise<unknown>;
}

export function defineOperation<I extends z.ZodType>(op: Operation<I>): Operation<I> {
  return op;
}
