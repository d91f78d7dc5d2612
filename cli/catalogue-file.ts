import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { isMap, isSeq, LineCounter, parseDocument, type Document, type Node, type Pair } from 'yaml';
import { isCountry, isCurrency } from '../domain/catalogue';
import { normaliseProduct, type Catalogue, type CatalogueProduct } from './catalogue';

/** The JSON Schema editors validate against (docs/ci.md, "The file"); `billing catalogue schema` prints it. */
export const SCHEMA_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'catalogue.schema.json');
export const catalogueSchema = (): Record<string, unknown> => JSON.parse(fs.readFileSync(SCHEMA_PATH, 'utf8'));

let compiled: ValidateFunction | undefined;
/** The schema compiled once per process: a run that reads several files (or tests calling the CLI) compiles it once. */
const catalogueValidator = (): ValidateFunction =>
  (compiled ??= new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(catalogueSchema()));

/** One thing wrong with the file, where it is. */
export interface FileProblem {
  file: string;
  line: number;
  column: number;
  /** `products[0].prices[2].currency`, the field as a path. */
  field: string;
  message: string;
}

export interface LoadedCatalogue {
  file: string;
  catalogue: Catalogue;
  /** The line each product (by SKU) starts on, for annotations. */
  lineOf: Map<string, number>;
}

export class InvalidCatalogue extends Error {
  constructor(readonly problems: FileProblem[]) {
    super(problems.map(renderProblem).join('\n'));
  }
}

export const renderProblem = (p: FileProblem) => `${p.file}:${p.line}:${p.column}: ${p.field}: ${p.message}`;

type PathKey = string | number;

function fieldName(keys: PathKey[], data: unknown): string {
  let out = '';
  let node: unknown = data;
  for (const k of keys) {
    out += typeof k === 'number' ? `[${k}]` : out ? `.${k}` : k;
    node = (node as Record<PathKey, unknown> | undefined)?.[k];
    // Name the row too: the SKU of a product, the country of a price.
    if (typeof k === 'number' && node && typeof node === 'object') {
      const row = node as Record<string, unknown>;
      const label = [row.sku, row.country, row.currency].filter((v) => typeof v === 'string').join(' ');
      if (label) out += ` (${label})`;
    }
  }
  return out || '(the file)';
}

/** Where a path points in the document: the key of `child` when given, else the node itself. */
function positionOf(doc: Document, lines: LineCounter, keys: PathKey[], child?: string): { line: number; col: number } {
  const node = (keys.length ? doc.getIn(keys, true) : doc.contents) as Node | undefined;
  let offset = node?.range?.[0];
  if (child !== undefined && isMap(node)) {
    const pair = node.items.find((p: Pair) => (p.key as { value?: unknown })?.value === child);
    const keyRange = (pair?.key as Node | undefined)?.range;
    if (keyRange) offset = keyRange[0];
  }
  const pos = lines.linePos(offset ?? 0);
  return { line: pos.line, col: pos.col };
}

function schemaProblems(file: string, doc: Document, lines: LineCounter, data: unknown, errors: ErrorObject[]) {
  return errors.map((e): FileProblem => {
    const keys: PathKey[] = e.instancePath
      .split('/')
      .slice(1)
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    let child: string | undefined;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      child = String(e.params.additionalProperty);
      message = `unknown field "${child}" (fields are checked: a typo is an error, not ignored)`;
    } else if (e.keyword === 'required') {
      message = `"${e.params.missingProperty}" is required`;
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify(e.params.allowedValue)}`;
    }
    const { line, col } = positionOf(doc, lines, keys, child);
    const field = fieldName(child ? [...keys, child] : keys, data);
    return { file, line, column: col, field, message };
  });
}

/**
 * What the schema cannot say: real countries and currencies, one entry per SKU and per price. Runs
 * on a file the schema refused too (so one run shows every problem), reading only what is well-formed.
 */
function ruleProblems(file: string, doc: Document, lines: LineCounter, data: unknown) {
  const problems: FileProblem[] = [];
  const at = (keys: PathKey[], message: string) => {
    const { line, col } = positionOf(doc, lines, keys);
    problems.push({ file, line, column: col, field: fieldName(keys, data), message });
  };
  const str = (v: unknown): v is string => typeof v === 'string';
  const products = (data as { products?: unknown })?.products;
  if (!Array.isArray(products)) return problems;
  const skus = new Map<string, number>();
  products.forEach((p: { sku?: unknown; prices?: unknown }, i) => {
    if (!p || typeof p !== 'object') return;
    if (str(p.sku) && skus.has(p.sku))
      at(['products', i, 'sku'], `SKU "${p.sku}" is listed twice (first at products[${skus.get(p.sku)}])`);
    if (str(p.sku)) skus.set(p.sku, i);
    if (!Array.isArray(p.prices)) return;
    const seen = new Set<string>();
    p.prices.forEach((price: { country?: unknown; currency?: unknown }, j) => {
      if (!price || typeof price !== 'object') return;
      if (str(price.country) && !isCountry(price.country))
        at(
          ['products', i, 'prices', j, 'country'],
          `"${price.country}" is not an ISO 3166-1 country code (e.g. US, DE)`,
        );
      if (str(price.currency) && !isCurrency(price.currency))
        at(
          ['products', i, 'prices', j, 'currency'],
          `"${price.currency}" is not a supported ISO 4217 currency (e.g. USD, EUR)`,
        );
      const key = `${String(price.country)} ${String(price.currency)}`;
      if (str(price.country) && str(price.currency) && seen.has(key))
        at(['products', i, 'prices', j], `${key} is listed twice for ${String(p.sku)}`);
      seen.add(key);
    });
  });
  return problems;
}

/** Parse and check a catalogue file: every problem, with its line and field, or the catalogue. */
export function parseCatalogue(file: string, text: string): LoadedCatalogue {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    throw new InvalidCatalogue(
      doc.errors.map((e) => {
        const pos = lines.linePos(e.pos[0]);
        return { file, line: pos.line, column: pos.col, field: '(YAML)', message: e.message.split('\n')[0] };
      }),
    );
  }
  const data = doc.toJS() as unknown;
  const validate = catalogueValidator();
  const shape = validate(data) ? [] : schemaProblems(file, doc, lines, data, validate.errors ?? []);
  // A field the schema already refused is not reported twice.
  const rules = ruleProblems(file, doc, lines, data).filter((r) => !shape.some((p) => p.field === r.field));
  const problems = [...shape, ...rules].sort((a, b) => a.line - b.line || a.column - b.column);
  if (problems.length) throw new InvalidCatalogue(problems);
  const valid = data as { products: CatalogueProduct[]; paywall?: Catalogue['paywall'] };
  const lineOf = new Map<string, number>();
  const products = doc.getIn(['products'], true);
  if (isSeq(products))
    products.items.forEach((item, i) => {
      const range = (item as Node).range;
      if (range) lineOf.set(valid.products[i].sku, lines.linePos(range[0]).line);
    });
  return {
    file,
    lineOf,
    catalogue: {
      products: valid.products.map(normaliseProduct).sort((a, b) => a.sku.localeCompare(b.sku)),
      paywall: valid.paywall ? { published: valid.paywall.published ?? true, config: valid.paywall.config } : null,
    },
  };
}

/** `file` as the command line names it (messages say it so), read relative to `cwd`. */
export function loadCatalogueFile(file: string, cwd = process.cwd()): LoadedCatalogue {
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (e) {
    throw new InvalidCatalogue([
      {
        file,
        line: 0,
        column: 0,
        field: '(the file)',
        message: `cannot read it (${(e as NodeJS.ErrnoException).code})`,
      },
    ]);
  }
  return parseCatalogue(file, text);
}
