import type { Knex } from 'knex';
import { pageFromSql, rows, type PageRequest, type PageSource, type RowPage } from './paging';
import type { Row } from './row';

/** What the support desk wrote about an app user (`customer_notes`; docs/support.md, "Notes"). */

export interface NewNote {
  tenantId: string;
  appUserId: string;
  body: string;
  /** A key id, `user:<id>` or `operator` (operations/actor.ts `actorRef`). */
  writtenBy: string;
}

/**
 * Writes a note unless the app user already has `cap` of them, under a per-customer advisory
 * lock so two writers cannot both pass the count. Answers the row, or undefined at the cap.
 */
export async function insertNote(trx: Knex.Transaction, note: NewNote, cap: number): Promise<Row | undefined> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('customer-note:' || ? || ':' || ?, 0))`, [
    note.tenantId,
    note.appUserId,
  ]);
  const { rows: counted } = await trx.raw(
    `select count(*)::int as n from customer_notes where tenant_id = ? and app_user_id = ?`,
    [note.tenantId, note.appUserId],
  );
  if (counted[0].n >= cap) return undefined;
  const [row] = await trx('customer_notes')
    .insert({ tenant_id: note.tenantId, app_user_id: note.appUserId, body: note.body, written_by: note.writtenBy })
    .returning(['id', 'app_user_id', 'body', 'written_by', 'created_at']);
  return row;
}

/** The app user's notes, newest first, paged like every list. */
export function notePage(src: PageSource, appUserId: string, page: PageRequest): Promise<RowPage> {
  return pageFromSql(
    src,
    {
      table: 'customer_notes',
      columns:
        'customer_notes.id, customer_notes.app_user_id, customer_notes.body, customer_notes.written_by, customer_notes.created_at',
      from: 'customer_notes',
      filters: { app_user_id: appUserId },
    },
    page,
    rows,
  );
}
