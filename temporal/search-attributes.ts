import { KIND_ATTR, PROVIDER_ATTR, TENANT_ATTR } from '../workflows/search-attributes';

export { KIND_ATTR, PROVIDER_ATTR, TENANT_ATTR };

export const SEARCH_ATTRIBUTES = [TENANT_ATTR, PROVIDER_ATTR, KIND_ATTR];

/** `--search-attribute` flags for `temporal server start-dev`. */
export function devServerSearchAttributeFlags(): string[] {
  return SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=Keyword`]);
}
