import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

/**
 * Custom search attributes, so operators can filter runs in the Temporal UI by tenant, provider
 * and kind. Here (not in temporal/) because workflows that start children set them too.
 */
export const TENANT_ATTR = defineSearchAttributeKey('BillingTenantId', SearchAttributeType.KEYWORD);
export const PROVIDER_ATTR = defineSearchAttributeKey('BillingProvider', SearchAttributeType.KEYWORD);
export const KIND_ATTR = defineSearchAttributeKey('BillingKind', SearchAttributeType.KEYWORD);
/** Temporal's own record of the worker builds that ran a workflow (temporal/build-ids.ts). */
export const BUILD_IDS_ATTR = defineSearchAttributeKey('BuildIds', SearchAttributeType.KEYWORD_LIST);

/** The attributes of one run: its tenant, its kind and, where it acts for one, its provider. */
export function runAttributes(kind: string, tenantId: string, provider?: string): SearchAttributePair[] {
  return [
    { key: TENANT_ATTR, value: tenantId },
    { key: KIND_ATTR, value: kind },
    ...(provider ? [{ key: PROVIDER_ATTR, value: provider }] : []),
  ];
}
