import { describe, expect, it } from 'vitest';
import { surfaceWrites, type Edge } from '../../scripts/check-imports';

describe('the surfaces write only through operations (import rule)', () => {
  const edge = (from: string, to: string, names: string[], typeOnly = false): Edge => ({ from, to, names, typeOnly });

  it('refuses a db/ write imported by a dashboard page or the tool server, by name', () => {
    expect(surfaceWrites([edge('api/dashboard/keys-page.ts', 'db/api-keys.ts', ['insertApiKey'])])).toEqual([
      expect.stringContaining('api/dashboard/keys-page.ts imports insertApiKey from db/api-keys.ts'),
    ]);
    expect(surfaceWrites([edge('api/tools/server.ts', 'db/products.ts', ['createProduct'])])).toHaveLength(1);
    expect(surfaceWrites([edge('api/dashboard/x.ts', 'db/products.ts', ['*'])])).toHaveLength(1);
    // The consent page is a surface too: an assistant's consent is an operation (assistants.connect).
    expect(
      surfaceWrites([edge('api/oauth/consent-page.ts', 'db/assistant-grants.ts', ['insertAssistantGrant'])]),
    ).toHaveLength(1);
  });

  it('refuses a db/ read too: a page reads through the read operations', () => {
    expect(
      surfaceWrites([edge('api/dashboard/products-page.ts', 'db/products.ts', ['listProductsWithPriceCounts'])]),
    ).toEqual([expect.stringContaining('api/dashboard/products-page.ts imports listProductsWithPriceCounts')]);
  });

  it('lets through the sign-in mechanics, type imports, and folders that are not surfaces', () => {
    expect(
      surfaceWrites([
        edge('api/dashboard/auth-pages.ts', 'db/dashboard-users.ts', ['createSession', 'findUserForLogin']),
        edge('api/oauth/provider.ts', 'db/oauth-records.ts', ['OAuthRecords']),
        edge('api/dashboard/keys-page.ts', 'db/api-keys.ts', [], true),
        edge('operations/products/create.ts', 'db/products.ts', ['createProduct']),
      ]),
    ).toEqual([]);
  });
});
