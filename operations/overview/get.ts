import { z } from 'zod';
import { readOverview, type OverviewFigures } from '../../db/overview';
import { latencyFigures, type LatencyFigures } from '../../db/overview-latency';
import { repairCounts, type RepairCounts } from '../../db/overview-repairs';
import { readReadinessFacts } from '../../db/readiness-facts';
import { MODES } from '../../domain/providers';
import { readinessReport } from '../../domain/readiness';
import { defineOperation } from '../types';

/**
 * The dashboard's overview, every figure from one tenant transaction (one snapshot, one now()):
 * the mode's subscription and entitlement counts and revenue over the window, the last sync run,
 * readiness by the rule of `GET /v1/readiness`, repairs by provider and the last hour's latency.
 * Read with `subscribers:read` (its figures count subscribers; every role reads all of it). No REST
 * route and no tool: the API's figures are the charts (`GET /v1/charts/{name}`), readiness and
 * the lists each figure counts.
 */
export const getOverview = defineOperation({
  name: 'overview.get',
  summary: 'The dashboard’s overview figures for a mode and a 30- or 90-day window',
  scope: 'subscribers:read',
  write: false,
  input: z.object({ mode: z.enum(MODES), days: z.union([z.literal(30), z.literal(90)]) }).strict(),
  output: z.object({
    figures: z.custom<OverviewFigures>().describe('counts, revenue, day rows and the last sync run of the mode'),
    readiness: z.custom<ReturnType<typeof readinessReport>>().describe('the rows of GET /v1/readiness'),
    repairs: z.custom<RepairCounts[]>().describe('repairs by provider, last 24 hours and 7 days'),
    latency: z.custom<LatencyFigures>().describe('time to premium over the last hour'),
  }),
  async handler(ctx, input) {
    const { figures, facts, repairs, latency } = await ctx.tx(async (trx) => ({
      figures: await readOverview(trx, input.mode, input.days),
      facts: await readReadinessFacts(trx),
      repairs: await repairCounts(trx),
      latency: await latencyFigures(trx),
    }));
    return {
      figures,
      readiness: readinessReport(facts, { dashboardUrl: ctx.services.config.publicDashboardUrl }),
      repairs,
      latency,
    };
  },
});
