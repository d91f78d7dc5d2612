import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { BUILD_IDS_ATTR } from '../workflows/search-attributes';
import { logger } from '../runtime/logger';

/**
 * The value Temporal's `BuildIds` search attribute takes once an unversioned worker that names no build
 * has completed a workflow's first task. Our workers name none (temporal/worker.ts, `buildId: ''`): we
 * do not use worker versioning, so the attribute has nothing to tell.
 */
export const UNVERSIONED_BUILD_IDS: SearchAttributePair = { key: BUILD_IDS_ATTR, value: ['unversioned'] };

/**
 * Every workflow our clients start is started with `BuildIds` already at that value.
 *
 * Why: on a workflow's first completed task the server records the worker's build in `BuildIds`, and
 * when that changes the attribute it writes the workflow's visibility record a second time (server
 * 1.29, `updateBuildIdsAndDeploymentSearchAttributes`). Every checkout starts a customer workflow, so
 * that was a second visibility write per purchase: 13 % of the dev server's CPU in a profile at 20
 * purchases/s (bench/RESULTS.md, "The dev server's work per checkout"). Started with the value the
 * server would compute, the first task changes nothing and the write is not made.
 *
 * The server accepts the attribute at start (one of the predefined attributes clients may still
 * set), but says it may stop doing so. A server that refuses it refuses the start: the start is then
 * made again without it, and this process stops adding it (one warning), so nothing depends on it.
 */
export function presetBuildIdsInterceptor(): WorkflowClientInterceptor {
  let refused = false;
  const withPreset = <T extends { options: { typedSearchAttributes?: unknown } }>(input: T): T => {
    const given = input.options.typedSearchAttributes;
    // Only the array form, the one our starts use (workflow-starts.ts): anything else is left as given.
    if (refused || (given !== undefined && !Array.isArray(given))) return input;
    const pairs = (given ?? []) as SearchAttributePair[];
    if (pairs.some((p) => p.key.name === BUILD_IDS_ATTR.name)) return input;
    return { ...input, options: { ...input.options, typedSearchAttributes: [...pairs, UNVERSIONED_BUILD_IDS] } };
  };
  const guarded = async <T, I extends { options: { typedSearchAttributes?: unknown } }>(
    input: I,
    next: (input: I) => Promise<T>,
  ): Promise<T> => {
    const preset = withPreset(input);
    if (preset === input) return next(input);
    try {
      return await next(preset);
    } catch (err) {
      if (!isBuildIdsRefusal(err)) throw err;
      if (!refused)
        logger.warn(
          'Temporal refuses the BuildIds search attribute at start; workflows are started without it from now on',
        );
      refused = true;
      return next(input);
    }
  };
  return {
    startWithDetails: (input, next) => guarded(input, next),
    signalWithStart: (input, next) => guarded(input, next),
  };
}

/** The server's refusal of the attribute: INVALID_ARGUMENT naming it, anywhere in the error's causes. */
export function isBuildIdsRefusal(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, details, message } = e as { code?: unknown; details?: unknown; message?: unknown };
    if (code === 3 && /BuildIds/.test(`${String(details ?? '')} ${String(message ?? '')}`)) return true;
  }
  return false;
}
