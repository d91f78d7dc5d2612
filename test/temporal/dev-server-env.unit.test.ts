import { describe, expect, it } from 'vitest';
import { devServerGoEnv } from '../../temporal/dev-server';

/** The Go runtime settings every dev server we start gets (temporal/dev-server.ts); the environment wins. */
describe("the dev server's Go environment", () => {
  it('collects at 400 % and runs half the cores, at least one', () => {
    expect(devServerGoEnv({}, 2)).toEqual({ GOGC: '400', GOMAXPROCS: '1' });
    expect(devServerGoEnv({}, 1)).toEqual({ GOGC: '400', GOMAXPROCS: '1' });
    expect(devServerGoEnv({}, 8)).toEqual({ GOGC: '400', GOMAXPROCS: '4' });
    expect(devServerGoEnv({}, 3)).toEqual({ GOGC: '400', GOMAXPROCS: '1' });
  });

  it('GOGC and GOMAXPROCS set in the environment are kept; empty ones are not settings', () => {
    expect(devServerGoEnv({ GOGC: '100', GOMAXPROCS: '2' }, 2)).toEqual({ GOGC: '100', GOMAXPROCS: '2' });
    expect(devServerGoEnv({ GOGC: '', GOMAXPROCS: '' }, 4)).toEqual({ GOGC: '400', GOMAXPROCS: '2' });
  });
});
