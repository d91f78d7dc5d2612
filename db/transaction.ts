import type { Knex } from 'knex';

/**
 * The tenant transaction (`withTenant`) as the API layer names it: handlers only pass it on to
 * repository functions, so they need its type and nothing else from knex.
 */
export type Tx = Knex.Transaction;
