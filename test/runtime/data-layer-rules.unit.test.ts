import { describe, expect, it } from 'vitest';
import { migrationImports, modelImports, sqlConcatenation, type Edge } from '../../scripts/check-imports';

/**
 * The data layer's rules that scripts/check-imports.ts enforces (docs/data-layer.md, "One SQL rule"),
 * on made-up imports and code; test/runtime/architecture.test.ts holds the real tree to them.
 */
describe('the data layer rules (import checker)', () => {
  const edge = (from: string, to: string): Edge => ({ from, to, names: ['x'], typeOnly: false });

  it('nothing but the generated list imports a migration; migrations may share the policy helper', () => {
    expect(
      migrationImports([
        edge('db/chart-fold.ts', 'db/migrations/047_chart_sums.ts'),
        edge('db/migrations/050_receipt_notify_after_commit.ts', 'db/migrations/045_provisional_access.ts'),
        edge('operations/x/y.ts', 'db/migrations/001_schema.ts'),
        edge('db/migrate.ts', 'db/migrations/047_chart_sums.ts'),
      ]),
    ).toEqual([
      expect.stringContaining('db/chart-fold.ts imports db/migrations/047_chart_sums.ts'),
      expect.stringContaining('db/migrations/050_receipt_notify_after_commit.ts imports db/migrations/045'),
      expect.stringContaining('operations/x/y.ts imports db/migrations/001_schema.ts'),
      expect.stringContaining('db/migrate.ts imports db/migrations/047_chart_sums.ts'),
    ]);
    expect(
      migrationImports([
        edge('db/migrations/index.ts', 'db/migrations/047_chart_sums.ts'),
        edge('db/migrate.ts', 'db/migrations/index.ts'),
        edge('db/migrations/047_chart_sums.ts', 'db/migrations/tenant-policies.ts'),
        edge('db/chart-fold.ts', 'db/chart-sums.ts'),
      ]),
    ).toEqual([]);
  });

  it('objection is imported by db/models/ only, and the models by db/ only', () => {
    expect(
      modelImports(
        [edge('operations/products/get.ts', 'db/models/index.ts'), edge('db/products.ts', 'db/models/index.ts')],
        [
          { from: 'db/models/base.ts', name: 'objection' },
          { from: 'db/coupons.ts', name: 'objection' },
          { from: 'db/products.ts', name: 'knex' },
        ],
      ),
    ).toEqual([
      expect.stringContaining('db/coupons.ts imports objection'),
      expect.stringContaining('operations/products/get.ts imports db/models/index.ts'),
    ]);
  });

  it('SQL text glued with + is refused, whatever call takes it; one literal or template passes', () => {
    const code = [
      "await trx.raw('select * from products where sku = ' + sku);",
      "await reader.rows('select 1 ' + (x ? 'where a' : 'where b'), []);",
      "trx('products').whereRaw(('lower(sku) = ' + sku));",
      "await trx.raw('select * from products where sku = ?', [sku]);",
      'await trx.raw(`select ${COLUMNS.join(", ")} from products where id = ?`, [id]);',
      "const n = a + b; trx('products').update({ version: trx.raw('version + 1') });",
    ].join('\n');
    expect(sqlConcatenation('db/x.ts', code)).toEqual([
      expect.stringMatching(/^db\/x\.ts:1 builds SQL text with \+/),
      expect.stringMatching(/^db\/x\.ts:2 /),
      expect.stringMatching(/^db\/x\.ts:3 /),
    ]);
  });
});
