import { z } from 'zod';
import { appUsersByEmail } from '../../db/customers';
import { defineOperation } from '../types';

/**
 * The app users whose subscriptions carry this email (at most 20, by id): the dashboard's customer
 * search box, which opens the one found or lists them. No REST route and no tool: the API names a
 * customer by app user id (`GET /v1/customers/{app_user_id}`) and offers no lookup by email.
 */
export const findCustomers = defineOperation({
  name: 'customers.find',
  summary: 'The app users whose subscriptions carry an email (the dashboard’s customer search)',
  scope: 'customers:read',
  write: false,
  input: z.object({ email: z.string().min(1).max(320) }).strict(),
  output: z.object({ data: z.array(z.string().describe('app user id')) }),
  async handler(ctx, input) {
    return { data: await ctx.read((reader) => appUsersByEmail(reader, input.email)) };
  },
});
