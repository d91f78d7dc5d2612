import { z } from 'zod';
import { getConnectionSafe } from '../../db/connections';
import { notFound } from '../errors';
import { ACCOUNT, defineOperation } from '../types';
import { connectionView, startProof } from './connection';

/** How long Verify waits for the probe (one read-only call per mode, retried briefly). */
const VERIFY_WAIT_MS = 30_000;

export const verifyProvider = defineOperation({
  name: 'providers.verify',
  summary: 'Run the proof that a connection owns its account now, and wait (briefly) for its outcome',
  scope: ACCOUNT,
  write: true,
  input: z.object({ id: z.string() }).strict(),
  output: z.object({
    id: z.string(),
    provider: connectionView.shape.provider,
    outcome: z
      .enum(['verified', 'not_verified', 'running', 'unavailable'])
      .describe('running: still going after the wait; unavailable: the worker cannot be reached'),
    connection: connectionView,
  }),
  async handler(ctx, input) {
    const load = () => ctx.tx((trx) => getConnectionSafe(trx, input.id));
    const c = await load();
    if (!c) throw notFound('provider connection');
    const proving = await startProof(ctx, c);
    if (!proving) return { id: c.id, provider: c.provider, outcome: 'unavailable' as const, connection: c };
    // Bounded: with no worker polling, the result would never come; the proof still runs once one does.
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      proving.result().then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), VERIFY_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!finished) return { id: c.id, provider: c.provider, outcome: 'running' as const, connection: c };
    const after = (await load()) ?? c;
    return {
      id: c.id,
      provider: c.provider,
      outcome: after.verified_at ? ('verified' as const) : ('not_verified' as const),
      connection: after,
    };
  },
});
