import { z } from 'zod';
import { readinessReport } from '../../domain/readiness';
import { readReadinessFacts } from '../../db/readiness-facts';
import { defineOperation } from '../types';
import { id, provider } from '../schemas';

const readinessRow = z.object({
  provider,
  auth_kind: z.enum(['key_pair', 'store']).describe('`store` providers are proven by evidence, not configuration'),
  is_active: z.boolean(),
  live_ready: z.boolean(),
  test_ready: z.boolean(),
  live_detail: z.string().describe('why live_ready is what it is'),
  test_detail: z.string().describe('why test_ready is what it is'),
  test_mechanism: z.enum(['test_api_key', 'license_tester', 'sandbox_apple_id']),
  human_action: z.string().nullable().describe('one-line outstanding work; null when green'),
  manual_steps: z
    .array(z.string())
    .nullable()
    .describe('ordered steps for a person with a device; present only where a person must act'),
  console_url: z.string().nullable().describe('where that work happens'),
});

export const readinessBody = z.object({
  tenant_id: id(),
  providers: z.array(readinessRow),
  summary: z.object({
    total: z.number().int(),
    needs_manual_action: z.number().int().describe('providers whose next step needs a person'),
    live_ready: z.number().int(),
    test_ready: z.number().int(),
  }),
});

export const getReadiness = defineOperation({
  name: 'readiness.get',
  summary: 'Per provider and mode: can the app transact, and what is missing (store rows carry manual steps)',
  scope: 'readiness:read',
  write: false,
  input: z.object({}).strict(),
  output: readinessBody,
  rest: { method: 'GET', path: '/readiness' },
  pages: [{ page: '/readiness', gates: ['open'] }],
  tool: {
    name: 'billing_readiness',
    title: 'Readiness',
    description:
      'Readiness per provider and mode. Relay manual_steps to the person verbatim; they need a device and are never done by you.',
    // Built from stored facts (connections, recorded store evidence); no provider is asked.
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  async handler(ctx) {
    const facts = await ctx.tx((trx) => readReadinessFacts(trx));
    return {
      tenant_id: ctx.tenantId,
      ...readinessReport(facts, { dashboardUrl: ctx.services.config.publicDashboardUrl }),
    };
  },
});
