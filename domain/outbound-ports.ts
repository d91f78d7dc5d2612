/**
 * The ports an outbound webhook may be sent to. By default 80, 443 and 1024–65535: the web's
 * two and the unprivileged range, where tenants' receivers live. The privileged ports below 1024
 * (SMTP on 25, SSH on 22, …) are services a tenant has no business making the worker talk to.
 * The operator may set another list (`OUTBOUND_WEBHOOK_ALLOWED_PORTS`, read in runtime/config.ts);
 * the rule is checked when an endpoint's URL is saved and again before each POST
 * (activities/outbound-http.ts), so a list narrowed later still holds for stored URLs.
 */
export interface PortRange {
  from: number;
  to: number;
}

export const DEFAULT_OUTBOUND_PORTS = '80,443,1024-65535';

/** `80,443,1024-65535` as ranges; a string saying what is wrong when it is not such a list. */
export function parsePortRanges(text: string): PortRange[] | string {
  const ranges: PortRange[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(part);
    if (!m) return `"${part}" is neither a port nor a range (from-to)`;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to > 65535 || from > to) return `"${part}" is not within 1-65535, low to high`;
    ranges.push({ from, to });
  }
  if (!ranges.length) return 'the list is empty';
  return ranges;
}

/** The port a URL connects to: its own, else its scheme's (80 for http, 443 for https). */
export function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** The ranges as people read them: `80, 443, 1024–65535`. */
export function portsText(ranges: readonly PortRange[]): string {
  return ranges.map((r) => (r.from === r.to ? String(r.from) : `${r.from}–${r.to}`)).join(', ');
}

/** Why the URL's port is refused (null: allowed). */
export function outboundPortProblem(url: URL, ranges: readonly PortRange[]): string | null {
  const port = effectivePort(url);
  if (ranges.some((r) => port >= r.from && port <= r.to)) return null;
  return `port ${port} is not allowed for webhooks (allowed: ${portsText(ranges)})`;
}
