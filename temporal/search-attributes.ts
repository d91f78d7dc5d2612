import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes, so operators can filter runs in the Temporal UI by tenant, provider and kind. */
export const TENANT_ATTR = defineSearchAttributeKey('BillingTenantId', SearchAttributeType.KEYWORD);
export const PROVIDER_ATTR = defineSearchAttributeKey('BillingProvider', SearchAttributeType.KEYWORD);
export const KIND_ATTR = defineSearchAttributeKey('BillingKind', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [TENANT_ATTR, PROVIDER_ATTR, KIND_ATTR];

/** `--search-attribute` flags for `temporal server start-dev`. */
export function devServerSearchAttributeFlags(): string[] {
  return SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=Keyword`]);
}
