import { z } from 'zod';
import type { Operation } from '../operations/types';

/**
 * Tools are made from the operation table: every operation with a `tool` binding, its input
 * and output schemas, and annotations from what it does. An operation that names a product in
 * its REST path (`/products/{id}`) takes `product_id` or `sku` as a tool.
 */
export interface ToolDescriptor {
  op: Operation;
  names: 'product' | null;
  definition: {
    name: string;
    title: string;
    description: string;
    inputSchema: Record<string, unknown>;
    outputSchema: Record<string, unknown>;
    annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  };
}

const json = (s: z.ZodType, io: 'input' | 'output') => {
  const out = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
};

const titleOf = (name: string) => name.replace(/^billing_/, '').split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join(' ');

export function toolCatalog(ops: Operation[]): Map<string, ToolDescriptor> {
  const out = new Map<string, ToolDescriptor>();
  for (const op of ops) {
    if (!op.tool) continue;
    const names = op.rest?.path.startsWith('/products/{id}') ? ('product' as const) : null;
    const input = json(op.input, 'input') as { type: string; properties?: Record<string, unknown>; required?: string[]; additionalProperties?: boolean };
    if (names) {
      const { id: _id, ...rest } = input.properties ?? {};
      input.properties = {
        product_id: { type: 'string', description: 'the product id (uuid); or give sku' },
        sku: { type: 'string', description: 'the product SKU; or give product_id' },
        ...rest,
      };
      input.required = (input.required ?? []).filter((r) => r !== 'id');
    }
    const title = titleOf(op.tool.name);
    out.set(op.tool.name, {
      op,
      names,
      definition: {
        name: op.tool.name,
        title,
        description: op.tool.description,
        inputSchema: input,
        outputSchema: json(op.output, 'output'),
        annotations: {
          title,
          readOnlyHint: !op.write,
          destructiveHint: op.write && op.tool.destructive === true,
          idempotentHint: op.tool.idempotent ?? !op.write,
          // Sync operations act on the providers, outside this service.
          openWorldHint: op.scope === 'products:sync',
        },
      },
    });
  }
  return out;
}
