import { z } from 'zod';
import { getConnectionSafe, listConnectionsSafe } from '../../db/connections';
import { notFound } from '../errors';
import { defineOperation } from '../types';
import { connectionView } from './connection';

/**
 * Every provider connection with whether it has proven its account (and why not): the dashboard's
 * Providers page and the Imports page's choice of what can be imported. No REST route and no tool:
 * the API's list is `providers.list` (payment links, no proof state), and a proof is started and
 * read in the dashboard.
 */
export const listConnections = defineOperation({
  name: 'providers.connections',
  summary: 'Every provider connection with its proof state (the dashboard’s Providers and Imports pages)',
  scope: 'providers:read',
  write: false,
  input: z.object({}).strict(),
  output: z.object({ data: z.array(connectionView) }),
  async handler(ctx) {
    return { data: await ctx.tx((trx) => listConnectionsSafe(trx)) };
  },
});

/** One connection with its proof state, or 404: the dashboard's page of a connection (no REST route, as above). */
export const getConnection = defineOperation({
  name: 'providers.connection',
  summary: 'One provider connection with its proof state (the dashboard’s page of a connection)',
  scope: 'providers:read',
  write: false,
  input: z.object({ id: z.string().max(100) }).strict(),
  output: connectionView,
  errors: [404],
  async handler(ctx, input) {
    const found = await ctx.tx((trx) => getConnectionSafe(trx, input.id));
    if (!found) throw notFound('provider connection');
    return found;
  },
});
