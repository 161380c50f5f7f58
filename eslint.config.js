// ESLint flat config. TypeScript (server/, common/, src/, tests/, bench/, scripts/) is linted with
// typescript-eslint's type-checked rules; each file is type-checked by the tsconfig.json its folder belongs to
// (root tsconfig.json: console, common, console/e2e tests; server/tsconfig.json, and the stubs extending it in
// tests/server, tests/support and bench: the server). Plain JavaScript (*.mjs, *.cjs, this file) gets the
// core rules only.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'build/', 'data/', 'test-results/', 'bench/results/', 'coverage/', 'node_modules/'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // the code's convention: a leading underscore names a binding kept on purpose (an omitted rest sibling, an unused parameter)
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // the hooks' two rules (call order, effect dependencies); the plugin's React Compiler rules (refs, purity,
    // set-state-in-effect) check code for that compiler's optimisations, and the console is not compiled by it
    files: ['src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
    languageOptions: { globals: globals.browser },
  },
  {
    // react-admin's authProvider contract: async methods that refuse by rejecting with plain objects ({ redirectTo, message })
    files: ['src/authProvider/index.ts'],
    rules: { '@typescript-eslint/only-throw-error': 'off', '@typescript-eslint/require-await': 'off' },
  },
  {
    // tests assert on untyped JSON (response bodies, captured upstream requests): reading `any` is what they do
    files: ['tests/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // test doubles stand in for async interfaces (a database's close, an emulator's start) without having anything to await
    files: ['tests/**/*.{ts,tsx}'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // a migration must not depend on today's schema type, so it takes Kysely<any> (Kysely's documented pattern)
    files: ['server/db/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    // lines a reader can hold (issue 39): no source file over 500 lines and no function over 80 (blank lines and
    // comments not counted), no branching deeper than four blocks, no ternary inside a ternary, and a cyclomatic
    // complexity of at most 20. A file that must be longer (a table of data) says why in its first lines, with an
    // `eslint-disable max-lines -- <why>` comment; tests, benches and scripts are not held to these.
    files: ['server/**/*.ts', 'src/**/*.{ts,tsx}', 'common/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-depth': ['error', 4],
      complexity: ['error', 20],
      'no-nested-ternary': 'error',
    },
  },
  {
    // a migration is a schema written out once and never edited: its up() is a table of columns, however long
    files: ['server/db/migrations/**/*.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    // every query in a repository (issue 39): outside server/repositories/ and server/db/ (the schema, the
    // connection, the migrations) no code builds a query; it calls a repository function that does
    files: ['server/**/*.ts'],
    ignores: ['server/repositories/**', 'server/db/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'CallExpression[callee.property.name=/^(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)$/]',
          message: 'Queries live in server/repositories/: call a repository function instead.',
        },
        { selector: "TaggedTemplateExpression[tag.name='sql']", message: 'Raw SQL lives in server/repositories/ or server/db/.' },
        { selector: "CallExpression[callee.object.name='sql']", message: 'Raw SQL lives in server/repositories/ or server/db/.' },
      ],
    },
  },
);
