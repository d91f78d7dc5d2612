import type { EgressPolicy } from '../../egress/request';

/**
 * Where a service account's access token may be asked for. The token_uri comes from the JSON a
 * tenant pastes, so it is pinned: Google's token endpoints, or the origin the operator pointed
 * the Play adapter at (`STORE_ANDROID_API_BASE`: the emulator, or a stand-in the operator runs,
 * which then serves the token endpoint too). Anything else is refused when the JSON is saved
 * and again before any request is made.
 */
export const GOOGLE_TOKEN_URIS: readonly string[] = [
  'https://oauth2.googleapis.com/token',
  'https://accounts.google.com/o/oauth2/token',
  'https://www.googleapis.com/oauth2/v4/token',
];

/** A token answer is a few hundred bytes; a megabyte-sized one is not a token endpoint. */
const TOKEN_ANSWER_MAX_BYTES = 64 * 1024;

export type TokenEndpoint = { ok: true; policy: EgressPolicy } | { ok: false; reason: string };

export function tokenEndpoint(tokenUri: string, playBaseUrl: string, timeoutMs: number): TokenEndpoint {
  let url: URL;
  try {
    url = new URL(tokenUri);
  } catch {
    return { ok: false, reason: 'has a token_uri that is not a URL' };
  }
  const base = { timeoutMs, maxResponseBytes: TOKEN_ANSWER_MAX_BYTES };
  if (GOOGLE_TOKEN_URIS.includes(`${url.origin}${url.pathname}`) && !url.search && !url.username)
    return { ok: true, policy: { ...base, allowPrivate: false } };
  let configured: URL | undefined;
  try {
    configured = new URL(playBaseUrl);
  } catch {
    configured = undefined;
  }
  if (configured && url.origin === configured.origin && !url.username)
    return { ok: true, policy: { ...base, allowPrivate: true } };
  return {
    ok: false,
    reason: `has a token_uri that is not Google's token endpoint (${GOOGLE_TOKEN_URIS[0]}); download the key file again from the Google Cloud console`,
  };
}
