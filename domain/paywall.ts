import { z } from 'zod';

/** A paywall is published when its last publication is not older than its last edit. */
export function isPaywallPublished(p: { published_at: Date | string | null; updated_at: Date | string }): boolean {
  return p.published_at !== null && new Date(p.published_at).getTime() >= new Date(p.updated_at).getTime();
}

export const PAYWALL_MAX_PRODUCTS = 10;
const sku = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'SKUs are lowercase letters, digits, "_", "." and "-"');

/**
 * What a person sends when saving a draft: which products (by SKU), in which order, with which
 * labels. The edited fields only; the rest of a stored configuration is kept as it is.
 */
export const paywallEditSchema = z
  .object({
    title: z.string().trim().min(1, 'A title is required.').max(120),
    subtitle: z.string().trim().max(200).optional(),
    skus: z.array(sku).min(1, 'List at least one product.').max(PAYWALL_MAX_PRODUCTS),
    labels: z.record(sku, z.string().trim().min(1).max(80)).optional(),
    default_sku: sku.optional(),
  })
  .strict()
  .refine((c) => new Set(c.skus).size === c.skus.length, { message: 'A product is listed twice.', path: ['skus'] })
  .refine((c) => !c.default_sku || c.skus.includes(c.default_sku), {
    message: 'The default product must be one of the listed products.',
    path: ['default_sku'],
  });

/**
 * The paywall configuration the SDK renders: the edited fields, and keys no form edits kept as
 * they are (older configs carry a theme and features).
 */
export type PaywallConfig = z.infer<typeof paywallEditSchema> & Record<string, unknown>;
