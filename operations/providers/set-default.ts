import { z } from 'zod';
import { setDefault } from '../../db/connections';
import { ACCOUNT, defineOperation } from '../types';
import { connectionView, writeConnection } from './connection';

export const setDefaultProvider = defineOperation({
  name: 'providers.set_default',
  summary: "Make one connection its provider's default (the one an app gets when it names none)",
  scope: ACCOUNT,
  write: true,
  input: z.object({ id: z.string() }).strict(),
  output: connectionView,
  async handler(ctx, input) {
    return writeConnection(ctx, (trx) => setDefault(trx, input.id));
  },
});
