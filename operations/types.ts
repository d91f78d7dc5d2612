import type { Tx } from '../db/transaction';
import type { TenantReader } from '../db/tenant-read';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AccountArea } from '../domain/roles';
import type { Scope } from '../domain/scopes';
import type { Actor } from './actor';
import type { Services } from './services';

export interface OperationContext {
  actor: Actor;
  tenantId: string;
  requestId: string;
  services: Services;
  log: Logger;
  /** Run DB work as this tenant (RLS transaction). */
  tx<T>(work: (trx: Tx) => Promise<T>): Promise<T>;
  /**
   * Run plain read statements as this tenant (RLS, read only, no knex transaction): every list page reads here
   * (docs/data-layer.md, "Reading a list").
   */
  read<T>(work: (reader: TenantReader) => Promise<T>): Promise<T>;
  /** The caller asked for an asynchronous answer (REST `Prefer: respond-async`). */
  preferAsync: boolean;
  /**
   * What the handler adds to the HTTP answer (a 202 status, a header, or `text`: a representation
   * the REST answer carries instead of the JSON result, such as a chart's CSV); the tool surface
   * ignores it and answers the result.
   */
  response: { status?: number; headers: Record<string, string>; text?: string; stream?: Readable };
}

export interface RestBinding {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path relative to /v1, e.g. `/products/{id}`. */
  path: string;
  /** On a write: input fields taken from the query string rather than the body. */
  query?: string[];
  /** On a write: the operation takes no body at all. */
  noBody?: boolean;
}

/** The MCP tool annotations, stated per tool (never derived), so each one is a reviewed claim. */
export interface ToolAnnotations {
  /** Changes nothing anywhere. Equals "the operation is not a write" (the tool tests hold it so). */
  readOnlyHint: boolean;
  /** May remove or stop something a person would miss (sales at a store, objects at a provider). */
  destructiveHint: boolean;
  /** Calling it again with the same arguments changes nothing more. */
  idempotentHint: boolean;
  /** Reaches outside this service: it calls a payment provider or a store, live or test. */
  openWorldHint: boolean;
}

/**
 * The operation as a tool of the tool server (api/tools/tool-list.ts collects them).
 * openWorldHint is true exactly where the call goes out to a provider or a store; the reason is
 * beside each such declaration. Everything else answers from this service's own database.
 */
export interface ToolDeclaration {
  name: `billing_${string}`;
  title: string;
  description: string;
  /** The tool names a product by `product_id` or `sku`; the operation itself takes its `id`. */
  namesProduct?: true;
  annotations: ToolAnnotations;
}

/**
 * A dashboard page this operation gates (api/dashboard/page-access.ts derives the pages' gate
 * from these): `open` — a person needs this operation's scope or area to see the page (GET);
 * `act` — to send its forms (POST). A page's path covers its sub-paths; the most specific wins.
 */
export interface PageGate {
  page: `/${string}`;
  gates: readonly ('open' | 'act')[];
}

/**
 * One management operation, declared once, next to its handler. REST routes, the OpenAPI
 * document, scope checks, validation, auditing, the tool list and the dashboard pages' gate are
 * all derived from these fields; the registry (`operations/index.ts`) collects every
 * `defineOperation` in `operations/<resource>/` by itself (`operations/declared.ts`, written by
 * scripts/operations-table.ts). docs/architecture.md, "How to add an operation".
 */
export interface Operation<I extends z.ZodType = z.ZodType> {
  /** `<resource>.<verb>`: also the audit trail's action. */
  name: string;
  summary: string;
  /**
   * The key scope that admits it (a person's role carries scopes too: domain/roles.ts), or
   * `'account'`: an operation only a person in the dashboard may run (secret keys, provider
   * credentials and webhook secrets). Those have no REST route, no tool and no OpenAPI entry.
   */
  scope: Scope | typeof ACCOUNT;
  /** For an `'account'` operation: what it touches (domain/roles.ts); `credentials` unless said. */
  accountArea?: AccountArea;
  /** Writes are audited (outcome included, refusals too); reads go to the request log only. */
  write: boolean;
  input: I;
  /** Response body schema (documentation and test validation). */
  output: z.ZodType;
  rest?: RestBinding;
  /**
   * A key without the scope may still run it on the records it made itself (a held write it
   * asked for: docs/approvals.md); the handler narrows what it reads to those.
   */
  ownRecords?: true;
  /** Error responses this operation can give besides the common ones (for OpenAPI). */
  errors?: number[];
  /** Responses with a body of their own (a 202, a 409 with extra fields), for OpenAPI. */
  responses?: Record<number, { description: string; schema: z.ZodType }>;
  /** The operation is a tool of the tool server too. An `'account'` operation never is. */
  tool?: ToolDeclaration;
  /** The dashboard pages whose gate is this operation's scope (or account area). */
  pages?: readonly PageGate[];
  /**
   * `false`: the /v1 fuzz's oracle (test/fuzz/oracle.ts) does not model this operation's answers
   * (they need ids or state the fuzzer does not make) and only holds it to the error shape.
   */
  fuzzModelled?: false;
  /**
   * A held write's input while it waits for a person (docs/approvals.md): `seal` replaces what
   * must not be kept or shown in clear (a file of Play purchase tokens) before it is stored;
   * `open` gives the write its input back when a person approves it.
   */
  heldInput?: {
    seal(ctx: OperationContext, input: Record<string, unknown>): Record<string, unknown>;
    open(ctx: OperationContext, input: Record<string, unknown>): Record<string, unknown>;
  };
  handler(ctx: OperationContext, input: z.infer<I>): Promise<unknown>;
}

export const ACCOUNT = 'account';

/** Where a call came from: the audit row and the metrics name it. `cli` is the operator's admin CLI. */
export type Surface = 'rest' | 'tool' | 'dashboard' | 'cli';

/** Only the dashboard may run it (see `Operation.scope`). */
export function dashboardOnly(op: Pick<Operation, 'scope'>): boolean {
  return op.scope === ACCOUNT;
}

export function defineOperation<I extends z.ZodType>(op: Operation<I>): Operation<I> {
  return op;
}
