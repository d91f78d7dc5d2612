import { z } from 'zod';
import { changeBody } from '../../operations/changes/schema';
import type { ToolAnnotations } from '../../operations/types';
import type { ToolEntry } from './tool-list';

/**
 * The tool server's catalogue, made from the tool list (api/tools/tool-list.ts): each tool's
 * definition for `tools/list`, with the input and output schemas of the operation it runs. A
 * tool that names a product takes `product_id` or `sku` in place of the operation's `id`.
 */
export interface ToolDescriptor {
  entry: ToolEntry;
  definition: {
    name: string;
    title: string;
    description: string;
    inputSchema: Record<string, unknown>;
    outputSchema: Record<string, unknown>;
    annotations: { title: string } & ToolAnnotations;
  };
}

const json = (s: z.ZodType, io: 'input' | 'output') => {
  const out = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
};

/**
 * A write's answer is its operation's, or a held change when the key requires a person's
 * approval (docs/approvals.md): both are declared, so a client validating structured output
 * accepts either.
 */
function outputOf(entry: ToolEntry): Record<string, unknown> {
  if (!entry.operation.write) return json(entry.operation.output, 'output');
  return { type: 'object', ...json(z.union([entry.operation.output, changeBody]), 'output') };
}

export function toolCatalog(tools: readonly ToolEntry[]): Map<string, ToolDescriptor> {
  const out = new Map<string, ToolDescriptor>();
  for (const entry of tools) {
    const input = json(entry.operation.input, 'input') as {
      type: string;
      properties?: Record<string, unknown>;
      required?: string[];
      additionalProperties?: boolean;
    };
    if (entry.namesProduct) {
      const { id: _id, ...rest } = input.properties ?? {};
      input.properties = {
        product_id: { type: 'string', description: 'the product id (uuid); or give sku' },
        sku: { type: 'string', description: 'the product SKU; or give product_id' },
        ...rest,
      };
      input.required = (input.required ?? []).filter((r) => r !== 'id');
    }
    out.set(entry.name, {
      entry,
      definition: {
        name: entry.name,
        title: entry.title,
        description: entry.description,
        inputSchema: input,
        outputSchema: outputOf(entry),
        annotations: { title: entry.title, ...entry.annotations },
      },
    });
  }
  return out;
}
