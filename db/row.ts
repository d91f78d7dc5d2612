/**
 * A row as knex returns it: untyped at this boundary. Repositories that return whole rows use
 * this one alias, and the callers map rows into typed answers (each resource's `schema.ts` in `operations/`),
 * so the loose type stops at the first mapping instead of spreading.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Row = Record<string, any>;
