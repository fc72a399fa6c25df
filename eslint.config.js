// The layers of ../shared/DESIGN.md, held by lint: each block names what a layer may not reach.
// `npm run lint` runs ESLint and Prettier's check; CI runs it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Imports of a layer above: what a lower layer must never import. */
const HTTP = { group: ['**/http/**'], message: 'the HTTP layer is above this one: take plain values, throw domain errors' };
const KOA = { group: ['koa', '@koa/*'], message: 'only the HTTP layer and route files know Koa' };
const DOMAINS = {
  group: [
    '**/identity/**',
    '**/orgs/**',
    '**/teams/**',
    '**/serviceaccounts/**',
    '**/accesscontrol/**',
    '**/quotas/**',
    '**/preferences/**',
    '**/settings/**',
    '**/folders/**',
    '**/dashboards/**',
    '**/alerting/**',
    '**/permissions/**',
    '**/connectors/**',
    '**/chat/**',
    '**/ops/**',
    '**/admin/**',
    '**/web/**',
  ],
  message: 'a shared layer does not depend on the domains: what it needs of them comes through an interface that app.ts wires',
};
const AUDIT = { group: ['**/audit/**'], message: 'the audit layer is above this one' };
const AUTHZ = { group: ['**/authz/**'], message: 'the policy engine is above this one' };
const CRYPTO = { group: ['**/crypto/**'], message: 'the crypto layer is above this one' };
const OUTBOUND = { group: ['**/outbound/**'], message: 'the outbound layer is above this one' };
/** The entry points, which build the service from its layers and domains. */
const APP = { group: ['**/app.ts', '**/main.ts', '**/bootstrap.ts', '**/startup.ts'], message: 'only the entry points wire the layers together' };
/** The shared services container names domain types: the shared layers below HTTP take plain values. */
const SERVICES = { group: ['**/services.ts'], message: 'take the plain values this layer needs, not the services container' };

/** A call of the query builder (`db('table')`, `tx.db('table')`, `trx.raw(…)`): SQL belongs in a store. */
const SQL_OUTSIDE_STORE = [
  { selector: "CallExpression[callee.type='MemberExpression'][callee.property.name='db']", message: 'SQL lives in the domain store (store.ts / *.store.ts)' },
  { selector: "CallExpression[callee.type='MemberExpression'][callee.property.name='raw']", message: 'SQL lives in the domain store (store.ts / *.store.ts)' },
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', '.tools/**', 'test-artifacts/**', 'policies/build/**', 'src/web/assets/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  {
    // chai's property assertions (`expect(x).to.be.true`) are expressions by design
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    files: ['src/db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [HTTP, KOA, DOMAINS, AUDIT, AUTHZ, CRYPTO, OUTBOUND, APP, SERVICES] }] },
  },
  {
    files: ['src/crypto/**/*.ts', 'src/authz/**/*.ts', 'src/outbound/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [HTTP, KOA, DOMAINS, AUDIT, APP, SERVICES] }] },
  },
  {
    // what the HTTP layer needs of the domains comes through http/caller-services.ts, wired in app.ts
    files: ['src/http/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [DOMAINS, APP] }] },
  },
  {
    // the configuration is read before any layer starts: it imports none that could import it
    files: ['src/config.ts', 'src/config/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [HTTP, KOA, DOMAINS, { group: ['**/authz/**'], message: 'the configuration does not depend on the policy engine, which reads it' }] },
      ],
    },
  },
  {
    files: ['src/audit/store.ts', 'src/audit/writer.ts', 'src/audit/retention.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [HTTP, KOA] }] },
  },
  {
    // accesscontrol/policy-writer.ts writes every table a policy document is built from
    files: ['src/**/store.ts', 'src/**/*.store.ts', 'src/accesscontrol/policy-writer.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [HTTP, KOA] }] },
  },
  {
    // every request the service makes goes through the address policy and limits of src/outbound
    files: ['src/**/*.ts'],
    ignores: ['src/outbound/**'],
    rules: { 'no-restricted-globals': ['error', { name: 'fetch', message: 'requests to other services go through src/outbound' }] },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/store.ts', 'src/**/*.store.ts', 'src/accesscontrol/policy-writer.ts', 'src/db/**', 'src/audit/writer.ts', 'src/authz/document.ts'],
    rules: { 'no-restricted-syntax': ['error', ...SQL_OUTSIDE_STORE] },
  },
);
