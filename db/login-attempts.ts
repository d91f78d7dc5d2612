import type { Knex } from 'knex';

import { backoffWindows, STREAK_FORGOTTEN_AFTER_SECONDS, type AttemptKind, type Limits } from '../domain/login-limits';

export type AttemptKey = { kind: AttemptKind; key: string };

/** Refused: how long until the refusing allowance has room, and which allowance it was. */
export type Reservation = { ok: true; held: AttemptKey[] } | { ok: false; retryAfter: number; kind: AttemptKind };

/** The row's current window is still open (its length is the row's own: the back-off grows it). */
const IN_WINDOW = `a.window_started_at > now() - make_interval(secs => coalesce(a.window_seconds, ?))`;
/** The attempts taken since the last correct password, forgotten after a quiet week. */
const STREAK = `case when a.last_failure_at > now() - make_interval(secs => ${STREAK_FORGOTTEN_AFTER_SECONDS}) then a.streak else 0 end`;

/**
 * Takes one attempt from each key's allowance before the password is checked, or none at all.
 * Each key is one statement that counts and increments under the row's lock (INSERT … ON
 * CONFLICT DO UPDATE … WHERE): twenty concurrent requests get at most `max` rows back between
 * them, where a read-then-verify-then-write let all twenty through. A refusal hands back what
 * it took from the earlier keys. A window that opens after full allowances lasts as long as the
 * limit's back-off says (domain/login-limits.ts `backoffWindows`).
 */
export async function reserveAttempt(db: Knex, limits: Limits, keys: AttemptKey[]): Promise<Reservation> {
  const held: AttemptKey[] = [];
  for (const k of keys) {
    const l = limits[k.kind];
    const windows = backoffWindows(l);
    const { rows } = await db.raw(
      `insert into dashboard_login_attempts as a (key, failures, window_started_at, window_seconds, streak, last_failure_at)
         values (?, 1, now(), ?, 1, now())
       on conflict (key) do update set
         failures = case when ${IN_WINDOW} then a.failures + 1 else 1 end,
         window_started_at = case when ${IN_WINDOW} then a.window_started_at else now() end,
         window_seconds = case when ${IN_WINDOW} then coalesce(a.window_seconds, ?)
           else (?::int[])[least((${STREAK}) / ?::int, ?::int) + 1] end,
         streak = (${STREAK}) + 1,
         last_failure_at = now()
       where not (${IN_WINDOW} and a.failures >= ?)
       returning failures`,
      [
        k.key,
        l.windowSeconds,
        l.windowSeconds,
        l.windowSeconds,
        l.windowSeconds,
        l.windowSeconds,
        `{${windows.join(',')}}`,
        l.max,
        windows.length - 1,
        l.windowSeconds,
        l.max,
      ],
    );
    if (rows.length === 0) {
      await releaseAttempt(db, held);
      return { ok: false, retryAfter: await waitFor(db, l.windowSeconds, k.key), kind: k.kind };
    }
    held.push(k);
  }
  return { ok: true, held };
}

async function waitFor(db: Knex, baseWindowSeconds: number, key: string): Promise<number> {
  const { rows } = await db.raw(
    `select ceil(extract(epoch from (window_started_at + make_interval(secs => coalesce(window_seconds, ?)) - now())))::int as wait
       from dashboard_login_attempts where key = ?`,
    [baseWindowSeconds, key],
  );
  return Math.max(1, rows[0]?.wait ?? 1);
}

/**
 * Gives back attempts that turned out not to be failures. A refused sibling: the attempt is
 * handed back. A correct password (`correct`): also the end of the streak, so the back-off
 * starts again from its first window, the current one included.
 */
export async function releaseAttempt(db: Knex, keys: AttemptKey[], opts: { correct?: boolean } = {}): Promise<void> {
  if (keys.length === 0) return;
  await db('dashboard_login_attempts')
    .whereIn(
      'key',
      keys.map((k) => k.key),
    )
    .update({
      failures: db.raw('greatest(failures - 1, 0)'),
      ...(opts.correct ? { streak: 0, window_seconds: null } : { streak: db.raw('greatest(streak - 1, 0)') }),
    });
}

/** After a correct password: that account's failures from that address are forgiven. */
export async function clearAttempts(db: Knex, key: AttemptKey): Promise<void> {
  await db('dashboard_login_attempts').where({ key: key.key }).del();
}
