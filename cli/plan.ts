import { request, type ApiConfig } from './api-client';
import { diffCatalogue, describeChange, type CatalogueChange, type CatalogueNote } from './catalogue-diff';
import type { LoadedCatalogue } from './catalogue-file';
import { readServiceCatalogue, type ServiceCatalogue } from './service-state';

/** A finding of the drift report (GET /v1/sync), as the API renders it. */
export interface Finding {
  kind: string;
  subject: string;
  provider: string | null;
  mode: string | null;
  automatable: boolean;
  detail: string;
}

export interface DriftReport {
  confirm_count: number;
  findings: Finding[];
}

export interface Plan {
  changes: CatalogueChange[];
  notes: CatalogueNote[];
  /** The drift report as of this plan: what the sync would do at each provider, and what needs a person. */
  drift: DriftReport;
  service: ServiceCatalogue;
}

export const readDrift = async (cfg: ApiConfig) => (await request<DriftReport>(cfg, 'GET', '/sync')).body;

/** Diff against the service, then against each provider (the drift report: 503 drift_incomplete when one is unreachable). */
export async function makePlan(cfg: ApiConfig, file: LoadedCatalogue): Promise<Plan> {
  const service = await readServiceCatalogue(cfg);
  const { changes, notes } = diffCatalogue(file.catalogue, service);
  const drift = await readDrift(cfg);
  return { changes, notes, drift, service };
}

/** The sync closes automatable findings; the rest are for a person and never make the plan "changes". */
export const providerChanges = (p: Pick<Plan, 'drift'>) => p.drift.findings.filter((f) => f.automatable);
export const needsPerson = (p: Pick<Plan, 'drift'>) => p.drift.findings.filter((f) => !f.automatable);
export const hasChanges = (p: Plan) => p.changes.length > 0 || providerChanges(p).length > 0;

export function describeFinding(f: Finding): string {
  const where = [f.provider, f.mode].filter(Boolean).join(' ');
  const mark = f.automatable ? '~ sync' : '! person';
  return `${mark} ${where ? `${where} ` : ''}${f.subject}: ${f.kind} (${f.detail})`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function summaryOf(p: Plan): string {
  if (!hasChanges(p))
    return `Nothing to do.${needsPerson(p).length ? ` ${plural(needsPerson(p).length, 'finding needs', 'findings need')} a person.` : ''}`;
  return [
    `Plan: ${plural(p.changes.length, 'catalogue change')}`,
    `${plural(providerChanges(p).length, 'provider change')} for the sync`,
    `${plural(needsPerson(p).length, 'finding')} for a person`,
    `${plural(p.notes.length, 'note')}.`,
  ].join(', ');
}

/** The plan as lines: catalogue changes, provider changes, findings for a person, notes, the summary. */
export function planLines(p: Plan): string[] {
  return [
    ...p.changes.map(describeChange),
    ...p.drift.findings.map(describeFinding),
    ...p.notes.map((n) => `? ${n.text}`),
    summaryOf(p),
  ];
}

/** The plan for machines (`--json`). */
export function planJson(p: Plan) {
  return {
    has_changes: hasChanges(p),
    catalogue_changes: p.changes.map((c) => ({ ...c, line: describeChange(c) })),
    provider_changes: providerChanges(p),
    needs_person: needsPerson(p),
    notes: p.notes,
    confirm_count: p.drift.confirm_count,
    summary: summaryOf(p),
  };
}
