import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANDROID_ID_RE, SKU_RE } from '../../domain/catalogue';
import { ENTITLEMENT_ID_RE } from '../../domain/revenuecat';
import { describeChange, diffCatalogue } from '../../cli/catalogue-diff';
import { catalogueSchema, InvalidCatalogue, parseCatalogue, type FileProblem } from '../../cli/catalogue-file';
import { catalogueYaml } from '../../cli/pull';
import { normaliseProduct, type Catalogue } from '../../cli/catalogue';
import { annotation, workspacePath } from '../../cli/github';

const problemsOf = (text: string): FileProblem[] => {
  try {
    parseCatalogue('catalogue.yaml', text);
  } catch (e) {
    if (e instanceof InvalidCatalogue) return e.problems;
    throw e;
  }
  throw new Error('the file was accepted');
};

const GOOD = `version: 1
products:
  - sku: pro_monthly
    name: Pro monthly
    tier: monthly
    prices:
      - { country: US, currency: USD, amount: 999 }
      - { country: DE, currency: EUR, amount: 899 }
`;

describe('the catalogue file', () => {
  it('accepts a good file and normalises it (defaults, prices sorted)', () => {
    const { catalogue, lineOf } = parseCatalogue('catalogue.yaml', GOOD);
    expect(catalogue.products[0]).toMatchObject({
      sku: 'pro_monthly',
      type: 'subscription',
      kind: 'digital',
      android_store_product_id: null,
      entitlement: 'premium',
      prices: [
        { country: 'DE', currency: 'EUR', amount: 899 },
        { country: 'US', currency: 'USD', amount: 999 },
      ],
    });
    expect(lineOf.get('pro_monthly')).toBe(3);
  });

  it('an unknown field is an error at its own line, named by its path and the row', () => {
    const text = GOOD.replace('    tier: monthly\n', '    tier: monthly\n    colour: blue\n');
    expect(problemsOf(text)).toEqual([
      expect.objectContaining({
        line: 6,
        field: 'products[0] (pro_monthly).colour',
        message: expect.stringContaining('unknown field "colour"'),
      }),
    ]);
  });

  it('a price in an unsupported currency names the row and its line', () => {
    const text = GOOD.replace('currency: EUR', 'currency: XYZ');
    const [p, ...rest] = problemsOf(text);
    expect(rest).toEqual([]);
    expect(p).toMatchObject({ line: 8, field: 'products[0] (pro_monthly).prices[1] (DE XYZ).currency' });
    expect(p.message).toContain('"XYZ" is not a supported ISO 4217 currency');
  });

  it('a country without a currency names the row', () => {
    const text = GOOD.replace('{ country: DE, currency: EUR, amount: 899 }', '{ country: DE, amount: 899 }');
    expect(problemsOf(text)).toEqual([
      expect.objectContaining({
        line: 8,
        field: 'products[0] (pro_monthly).prices[1] (DE)',
        message: '"currency" is required',
      }),
    ]);
  });

  it('wrong types, bad patterns, duplicate SKUs, unknown countries and YAML errors: each with line and field', () => {
    expect(problemsOf(GOOD.replace('amount: 999', 'amount: 9.99'))[0]).toMatchObject({
      line: 7,
      field: 'products[0] (pro_monthly).prices[0] (US USD).amount',
      message: 'must be integer',
    });
    expect(problemsOf(GOOD.replace('sku: pro_monthly', 'sku: Pro Monthly'))[0]).toMatchObject({
      line: 3,
      field: 'products[0] (Pro Monthly).sku',
    });
    expect(problemsOf(GOOD.replace('tier: monthly', 'tier: daily'))[0].message).toContain('"monthly"');
    // An entitlement the API would refuse is refused here first, at its line.
    expect(problemsOf(GOOD.replace('tier: monthly', 'entitlement: "gold tier"'))[0]).toMatchObject({
      line: 5,
      field: 'products[0] (pro_monthly).entitlement',
      message: expect.stringContaining('must match pattern'),
    });
    expect(problemsOf(GOOD.replace('tier: monthly', 'entitlement: ""'))[0].field).toBe(
      'products[0] (pro_monthly).entitlement',
    );
    expect(problemsOf(GOOD.replace('country: US', 'country: QQ'))[0]).toMatchObject({
      line: 7,
      message: expect.stringContaining('"QQ"'),
    });
    const twice = GOOD + GOOD.split('products:\n')[1];
    expect(problemsOf(twice)[0]).toMatchObject({ line: 9, message: expect.stringContaining('listed twice') });
    expect(problemsOf('version: 1\nproducts: [\n')[0]).toMatchObject({ field: '(YAML)' });
    expect(problemsOf('products: []\n')[0]).toMatchObject({
      line: 1,
      field: '(the file)',
      message: '"version" is required',
    });
  });

  it('the published schema holds the same patterns as the service', () => {
    const schema = catalogueSchema() as any;
    expect(schema.definitions.product.properties.sku.pattern).toBe(SKU_RE.source);
    expect(schema.definitions.product.properties.android_store_product_id.pattern).toBe(ANDROID_ID_RE.source);
    expect(schema.definitions.product.properties.entitlement.pattern).toBe(ENTITLEMENT_ID_RE.source);
    expect(fs.existsSync('cli/catalogue.schema.json')).toBe(true);
  });

  it('pull writes a file that parses back to the same catalogue, byte-stable, so plan has nothing to do', () => {
    const catalogue: Catalogue = {
      products: [
        normaliseProduct({
          sku: 'b_annual',
          name: 'B: "annual" # not a comment',
          tier: 'annual',
          trial_per_platform: { web: 7, ios: 3 },
          prices: [{ country: 'US', currency: 'USD', amount: 8999 }],
        }),
        normaliseProduct({ sku: 'a_monthly', name: 'A', kind: 'physical', entitlement: 'gold:tier-1', prices: [] }),
      ].sort((a, b) => a.sku.localeCompare(b.sku)),
      paywall: { published: true, config: { skus: ['a_monthly'], headline: 'Go pro' } },
    };
    const text = catalogueYaml(catalogue);
    expect(text.startsWith('#')).toBe(true);
    // The default is left out; a named entitlement is written.
    expect(text).toContain('entitlement: gold:tier-1');
    expect(text.match(/entitlement:/g)).toHaveLength(1);
    const back = parseCatalogue('c.yaml', text).catalogue;
    expect(back).toEqual(catalogue);
    expect(catalogueYaml(back)).toBe(text);
    expect(diffCatalogue(back, { ...catalogue, retired: new Set() })).toEqual({ changes: [], notes: [] });
  });

  it('the diff: a new product with its prices, a changed field, a changed price; what it leaves alone is a note', () => {
    const service = {
      products: [
        normaliseProduct({
          sku: 'old',
          name: 'Old',
          prices: [
            { country: 'US', currency: 'USD', amount: 100 },
            { country: 'FR', currency: 'EUR', amount: 90 },
          ],
        }),
        normaliseProduct({ sku: 'gone', name: 'Gone' }),
      ],
      paywall: null,
      retired: new Set<string>(),
    };
    const file = {
      products: [
        normaliseProduct({
          sku: 'old',
          name: 'Older',
          entitlement: 'gold',
          prices: [{ country: 'US', currency: 'USD', amount: 120 }],
        }),
        normaliseProduct({ sku: 'new', name: 'New', prices: [{ country: 'US', currency: 'USD', amount: 5 }] }),
      ],
      paywall: null,
    };
    const d = diffCatalogue(file, service);
    expect(d.changes.map((c) => c.kind)).toEqual([
      'update_field',
      'update_field',
      'set_price',
      'create_product',
      'set_price',
    ]);
    expect(d.changes[1]).toMatchObject({ field: 'entitlement', from: 'premium', to: 'gold' });
    expect(describeChange(d.changes[1])).toBe('~ product old: entitlement "premium" → "gold"');
    expect(d.notes.map((n) => n.text)).toEqual([
      'old FR EUR: priced in the service, not in the file (left as is)',
      'gone: in the service, not in the file (left as is; retire it by hand)',
    ]);
  });

  it('annotations name the file from the repository root, wherever the command ran', () => {
    const env = { GITHUB_WORKSPACE: '/repo' };
    expect(workspacePath('/repo/billing/../catalogue/prod.yaml', env)).toBe('catalogue/prod.yaml');
    expect(workspacePath('/elsewhere/c.yaml', env)).toBe('/elsewhere/c.yaml');
  });

  it('annotations escape what GitHub would read as syntax', () => {
    expect(annotation('error', 'a,b: 50%\nnext', { file: 'c.yaml', line: 3, title: 'x:y' })).toBe(
      '::error file=c.yaml,line=3,title=x%3Ay::a,b: 50%25%0Anext',
    );
  });
});
