import type { Knex } from 'knex';

export const LOGIN_WINDOW_SECONDS = 15 * 60;
/** Failures allowed per window: per email (guessing one account) and per client address (spraying many). */
export const MAX_FAILURES = { email: 5, ip: 30 } as const;

export type AttemptKey = { kind: keyof typeof MAX_FAILURES; key: string };

const IN_WINDOW = `window_started_at > now() - make_interval(secs => ${LOGIN_WINDOW_SECONDS})`;

/** Seconds until the first blocked key's window ends, or 0 when every key may still try. */
export async function loginBlockedFor(db: Knex, keys: AttemptKey[]): Promise<number> {
  for (const k of keys) {
    const { rows } = await db.raw(
      `select ceil(extract(epoch from (window_started_at + make_interval(secs => ${LOGIN_WINDOW_SECONDS}) - now())))::int as wait
         from dashboard_login_attempts where key = ? and failures >= ? and ${IN_WINDOW}`,
      [k.key, MAX_FAILURES[k.kind]],
    );
    if (rows.length > 0) return Math.max(1, rows[0].wait);
  }
  return 0;
}

/** One atomic upsert per key: count in the current window, or start a new window. */
export async function recordLoginFailure(db: Knex, keys: AttemptKey[]): Promise<void> {
  for (const k of keys) {
    await db.raw(
      `insert into dashboard_login_attempts as a (key, failures, window_started_at) values (?, 1, now())
       on conflict (key) do update set
         failures = case when a.${IN_WINDOW} then a.failures + 1 else 1 end,
         window_started_at = case when a.${IN_WINDOW} then a.window_started_at else now() end`,
      [k.key],
    );
  }
}

export async function clearLoginFailures(db: Knex, key: AttemptKey): Promise<void> {
  await db('dashboard_login_attempts').where({ key: key.key }).del();
}
