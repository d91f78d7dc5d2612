import { EXPORT_SCHEMA_VERSION, type ExportFormat } from './export-schema';

/**
 * Scheduled exports to a tenant's S3-compatible bucket (docs/exports.md, "Scheduled exports to your
 * bucket"): the rules, pure. A run covers whole UTC days `[start, end)`, so every event of a day is in
 * one run and the run's manifest can be held against that day's signed digest.
 */

/** Failed runs in a row before the destination stops (its dead-letter state: a person saves it again). */
export const DESTINATION_MAX_FAILURES = 3;

export const DESTINATION_STATUSES = ['active', 'stopped'] as const;

/** What the form asks for; the access key id and secret are sealed, never shown back. */
export interface DestinationFields {
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  format: ExportFormat;
}

/** S3's bucket naming rule (3–63 lower-case letters, digits, dots, hyphens; a letter or digit at each end). */
export function isBucketName(s: string): boolean {
  return /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s) && !s.includes('..');
}

/** The endpoint is an http(s) origin with no credentials, path, query or fragment. */
export function endpointRefusal(s: string): string | null {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return 'The endpoint must be a URL such as https://s3.eu-west-1.amazonaws.com.';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'The endpoint must start with https:// or http://.';
  if (url.username || url.password) return 'The endpoint must not carry a user name or password.';
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash)
    return 'The endpoint is the storage’s address alone: no path, query or fragment (the bucket is its own field).';
  return null;
}

/** A prefix is a folder: no leading slash, ends with one (added), printable, no `..` segment. */
export function normalPrefix(s: string): string | null {
  const p = s.trim().replace(/^\/+/, '');
  if (p === '') return '';
  if (p.length > 200 || !/^[A-Za-z0-9!_.*'()\-/=]+$/.test(p) || p.split('/').includes('..')) return null;
  return p.endsWith('/') ? p : `${p}/`;
}

const DAY_MS = 86_400_000;

/** The start (UTC midnight) of the day holding `ms`. */
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** A run's folder: `<prefix><run number, 6 digits>/`; each file keeps its export name inside. */
export function runFolder(prefix: string, seq: number): string {
  return `${prefix}${String(seq).padStart(6, '0')}/`;
}

export const MANIFEST_NAME = 'manifest.json';

/** One day's chained events as the run's events file holds them. */
export interface DayTally {
  date: string;
  events: number;
  /** Per chain (the events file's `chain`): the sequence and hash of its last event that day. */
  heads: Map<string, { sequence: number; hash: string }>;
}

/** Adds one events-file row (with its chain fields) to the day tallies. */
export function tallyEvent(
  days: Map<string, DayTally>,
  row: { chain: unknown; sequence: unknown; hash: unknown; created_at: unknown },
): void {
  if (row.sequence === null || row.sequence === undefined || typeof row.chain !== 'string') return;
  const date = String(row.created_at).slice(0, 10);
  let day = days.get(date);
  if (!day) days.set(date, (day = { date, events: 0, heads: new Map() }));
  day.events++;
  const sequence = Number(row.sequence);
  const head = day.heads.get(row.chain);
  if (!head || head.sequence < sequence) day.heads.set(row.chain, { sequence, hash: String(row.hash) });
}

export interface ManifestFile {
  table: string;
  key: string;
  rows: number;
  bytes: number;
  sha256: string;
}

export interface ManifestDay {
  date: string;
  events: number;
  chains: number;
  root: string;
}

export interface Manifest {
  schema_version: number;
  tenant_id: string;
  run: number;
  format: ExportFormat;
  window: { start: string | null; end: string };
  files: ManifestFile[];
  /** Per day with chained events: the count and root the day's signed digest must equal. */
  days: ManifestDay[];
}

export function buildManifest(m: Omit<Manifest, 'schema_version'>): Manifest {
  return {
    schema_version: EXPORT_SCHEMA_VERSION,
    ...m,
    days: [...m.days].sort((a, b) => a.date.localeCompare(b.date)),
  };
}

/**
 * Where the manifest and the digests disagree, in our words (empty: they agree). `digests` has one
 * entry per day the database holds chained events for in the window, made or read by the caller.
 */
export function manifestDisagreements(
  days: readonly ManifestDay[],
  digests: ReadonlyMap<string, { events: number; root: string }>,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const d of days) {
    seen.add(d.date);
    const g = digests.get(d.date);
    if (!g) out.push(`${d.date}: the export has ${d.events} events the digest does not know`);
    else if (g.events !== d.events) out.push(`${d.date}: the export has ${d.events} events, the digest ${g.events}`);
    else if (g.root !== d.root) out.push(`${d.date}: the chain heads differ from the digest’s root`);
  }
  for (const [date, g] of digests)
    if (!seen.has(date) && g.events > 0) out.push(`${date}: the digest has ${g.events} events, the export none`);
  return out;
}
