import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { customerExists } from '../../db/customers';
import { eraseCustomer } from '../../db/erasure';
import { createExport, storeExportFile } from '../../db/exports';
import { withTenant } from '../../db/tenant-tx';
import { newTenant } from '../helpers/api';
import { appDb, testDb } from '../helpers/db';
import { makeEntitlement } from '../helpers/factories';
import { until } from '../helpers/until';

/**
 * An export running while a customer is erased (docs/exports.md, "Erasures"): the erasure and the
 * transaction that stores a file take the export's row lock, so whichever commits first, no part
 * read before the erasure stays: stored after it, the file keeps none; stored before, the erasure
 * deletes it. As the app role, under row-level security.
 */
describe('an erasure while an export is running', () => {
  const setup = async () => {
    const t = await newTenant('erase-race');
    const user = `race_${crypto.randomUUID()}`;
    await makeEntitlement(t.tenant_id, { appUserId: user });
    const id = crypto.randomUUID();
    await withTenant(appDb(), t.tenant_id, (trx) =>
      createExport(trx, { id, tenantId: t.tenant_id, format: 'csv', since: null, workflowId: `export-${id}` }),
    );
    return { t, user, id };
  };
  const store = (tenantId: string, exportId: string, user: string) =>
    withTenant(appDb(), tenantId, (trx) =>
      storeExportFile(trx, {
        tenantId,
        exportId,
        name: 'customers.v1.csv',
        table: 'customers',
        rows: 1,
        bytes: 10,
        sha256: '0'.repeat(64),
        parts: (async function* () {
          yield Buffer.from(`app_user_id\n${user}\n`);
        })(),
      }),
    );
  const erase = (tenantId: string, user: string) =>
    withTenant(appDb(), tenantId, (trx) =>
      eraseCustomer(trx, tenantId, user, 'operator', (id) => customerExists(trx, id)),
    );
  const parts = (exportId: string) => testDb()('export_file_parts').where({ export_id: exportId });

  it('a file stored while the erasure holds the export waits, then keeps no part', async () => {
    const { t, user, id } = await setup();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let erased!: () => void;
    const didErase = new Promise<void>((r) => (erased = r));
    const erasure = withTenant(appDb(), t.tenant_id, async (trx) => {
      await eraseCustomer(trx, t.tenant_id, user, 'operator', (x) => customerExists(trx, x));
      erased();
      await held; // committed only once the file's transaction is seen waiting on it
    });
    await didErase;
    const stored = store(t.tenant_id, id, user);
    await until(
      'the file’s transaction waits on the export’s row lock',
      async () =>
        (
          await testDb().raw(
            `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%from "exports"%for update%'`,
          )
        ).rows[0].n,
      (n) => n > 0,
      20_000,
    );
    release();
    await erasure;
    expect(await stored).toBe(true);
    expect(await parts(id)).toEqual([]);
    const [row] = await testDb()('exports').where({ id });
    expect(row.purged_at).not.toBeNull();
  });

  it('a file stored before the erasure is deleted by it', async () => {
    const { t, user, id } = await setup();
    expect(await store(t.tenant_id, id, user)).toBe(true);
    expect(await parts(id)).toHaveLength(1);
    await erase(t.tenant_id, user);
    expect(await parts(id)).toEqual([]);
  });
});
