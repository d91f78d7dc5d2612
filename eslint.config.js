// ESLint: typescript-eslint's recommended rules everywhere, plus the type-aware rules that catch
// what matters in a service (a promise nobody awaits loses an error or a write). Type-aware
// linting costs a full type-check, so only those few rules use it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'sdk/dist/**',
      'coverage/**',
      'test-artifacts/**',
      '.data/**',
      'examples/web/app.js',
      // Generated from the OpenAPI document by scripts/openapi-types.ts, not written by hand.
      'test/typed-client/openapi.d.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      // A shutdown handler may read a handle before it is assigned: that `let` stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests and benches read JSON answers loosely and assert on them; typing every body would
    // add noise without catching anything the assertions do not. Production code keeps the rule.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // One way out (docs/egress.md): provider, activity, workflow and request-handling code reaches
    // the network only through egress/, which holds the address guard, refuses redirects and
    // bounds answers. A bare fetch or http client here would bypass all three.
    files: ['providers/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'operations/**/*.ts', 'api/**/*.ts'],
    ignores: ['api/http-server.ts', 'api/main.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        {
          name: 'fetch',
          message:
            "Use egress/ (egressRequest, or operatorHostFetch for the operator's provider hosts): docs/egress.md.",
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'node:https', 'http', 'https', 'undici', 'node:tls', 'tls'].map((name) => ({
            name,
            message: 'Outbound requests go through egress/ (docs/egress.md).',
          })),
        },
      ],
    },
  },
  {
    // Every router matches a path exactly as written (api/router.ts): a router that ignored letter
    // case or a trailing slash ran pages the dashboard's page gate never matched.
    files: ['api/**/*.ts'],
    ignores: ['api/router.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Router']",
          message: 'Make routers with exactRouter() (api/router.ts): case-sensitive and strict.',
        },
      ],
    },
  },
  {
    // Product code reads at 120 columns: Prettier wraps the code, comments are wrapped by hand. A
    // message, a SQL statement or a URL stays one string, so that grep finds it whole.
    files: [
      '{domain,runtime,egress,vault,db,providers,workflows,activities,temporal,operations,api,emulators,seed,scripts}/**/*.ts',
      'sdk/src/**/*.ts',
    ],
    rules: {
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
