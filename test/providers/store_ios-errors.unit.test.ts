import { APIException } from '@apple/app-store-server-library';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../providers/errors';
import { serverApiFailure } from '../../providers/store_ios/errors';

describe('App Store Server API failures', () => {
  it('a 429 waits until the UNIX time in ms its Retry-After names (not that many seconds)', () => {
    const err = serverApiFailure(new APIException(429, 4290000, 'Rate limit exceeded.'), String(Date.now() + 3000));
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.errorClass).toBe('rate_limited');
    expect(err.retryAfterMs).toBeGreaterThanOrEqual(2000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(4000);
  });
});
