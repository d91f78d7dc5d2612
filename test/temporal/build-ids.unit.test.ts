import { describe, expect, it } from 'vitest';
import type { SearchAttributePair } from '@temporalio/common';
import { isBuildIdsRefusal, presetBuildIdsInterceptor, UNVERSIONED_BUILD_IDS } from '../../temporal/build-ids';
import { TENANT_ATTR } from '../../workflows/search-attributes';

type Input = { options: { typedSearchAttributes?: SearchAttributePair[] } };
const input = (): Input => ({ options: { typedSearchAttributes: [{ key: TENANT_ATTR, value: 't1' }] } });
const keys = (i: Input) => (i.options.typedSearchAttributes ?? []).map((p) => p.key.name);

// What the client throws for a refused start: its own ServiceError around the server's gRPC error.
const refusal = () =>
  Object.assign(new Error('Failed to signalWithStart Workflow'), {
    cause: Object.assign(new Error("3 INVALID_ARGUMENT: BuildIds attribute can't be set in SearchAttributes"), {
      code: 3,
      details: "BuildIds attribute can't be set in SearchAttributes",
    }),
  });

describe('the BuildIds preset', () => {
  it('is added to the start, beside the attributes given', async () => {
    const seen: Input[] = [];
    const i = presetBuildIdsInterceptor();
    await i.signalWithStart!(input() as never, async (x) => (seen.push(x as Input), 'run'));
    expect(keys(seen[0])).toEqual(['BillingTenantId', 'BuildIds']);
    expect(seen[0].options.typedSearchAttributes![1]).toBe(UNVERSIONED_BUILD_IDS);
  });

  it('a server that refuses it gets the start again without it, and this client stops adding it', async () => {
    const seen: Input[] = [];
    const i = presetBuildIdsInterceptor();
    const next = async (x: Input) => {
      seen.push(x);
      if (keys(x).includes('BuildIds')) throw refusal();
      return 'run';
    };
    await expect(i.signalWithStart!(input() as never, next as never)).resolves.toBe('run');
    await i.startWithDetails!(input() as never, next as never);
    expect(seen.map(keys)).toEqual([['BillingTenantId', 'BuildIds'], ['BillingTenantId'], ['BillingTenantId']]);
  });

  it('any other failure is the caller’s, and is not retried', async () => {
    let calls = 0;
    const i = presetBuildIdsInterceptor();
    const other = Object.assign(new Error('3 INVALID_ARGUMENT: search attribute BillingKind is not defined'), {
      code: 3,
    });
    await expect(
      i.signalWithStart!(input() as never, async () => {
        calls++;
        throw other;
      }),
    ).rejects.toBe(other);
    expect(calls).toBe(1);
    expect(isBuildIdsRefusal(new Error('BuildIds'))).toBe(false);
    expect(isBuildIdsRefusal(refusal())).toBe(true);
  });
});
