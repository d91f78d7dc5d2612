import type { Knex } from 'knex';

import type { AttemptKind, Limit, Limits } from '../domain/login-limits';

export type AttemptKey = { kind: AttemptKind; key: string };

/** Refused: how long until the refusing allowance has room, and which allowance it was. */
export type Reservation = { ok: true; held: AttemptKey[] } | { ok: false; retryAfter: number; kind: AttemptKind };

const inWindow = (l: Limit, alias = '') =>
  `${alias}window_started_at > now() - make_interval(secs => ${Number(l.windowSeconds)})`;

/**
 * Takes one attempt from each key's allowance before the password is checked, or none at all.
 * Each key is one statement that counts and increments under the row's lock (INSERT … ON
 * CONFLICT DO UPDATE … WHERE): twenty concurrent requests get at most `max` rows back between
 * them, where a read-then-verify-then-write let all twenty through. A refusal hands back what
 * it took from the earlier keys.
 */
export async function reserveAttempt(db: Knex, limits: Limits, keys: AttemptKey[]): Promise<Reservation> {
  const held: AttemptKey[] = [];
  for (const k of keys) {
    const l = limits[k.kind];
    const { rows } = await db.raw(
      `insert into dashboard_login_attempts as a (key, failures, window_started_at) values (?, 1, now())
       on conflict (key) do update set
         failures = case when ${inWindow(l, 'a.')} then a.failures + 1 else 1 end,
         window_started_at = case when ${inWindow(l, 'a.')} then a.window_started_at else now() end
       where not (${inWindow(l, 'a.')} and a.failures >= ?)
       returning failures`,
      [k.key, l.max],
    );
    if (rows.length === 0) {
      await releaseAttempt(db, held);
      return { ok: false, retryAfter: await waitFor(db, l, k.key), kind: k.kind };
    }
    held.push(k);
  }
  return { ok: true, held };
}

async function waitFor(db: Knex, l: Limit, key: string): Promise<number> {
  const { rows } = await db.raw(
    `select ceil(extract(epoch from (window_started_at + make_interval(secs => ?) - now())))::int as wait
       from dashboard_login_attempts where key = ?`,
    [l.windowSeconds, key],
  );
  return Math.max(1, rows[0]?.wait ?? 1);
}

/** Gives back attempts that turned out not to be failures (a correct password, a refused sibling). */
export async function releaseAttempt(db: Knex, keys: AttemptKey[]): Promise<void> {
  if (keys.length === 0) return;
  await db('dashboard_login_attempts')
    .whereIn(
      'key',
      keys.map((k) => k.key),
    )
    .update({ failures: db.raw('greatest(failures - 1, 0)') });
}

/** After a correct password: that account's failures from that address are forgiven. */
export async function clearAttempts(db: Knex, key: AttemptKey): Promise<void> {
  await db('dashboard_login_attempts').where({ key: key.key }).del();
}
