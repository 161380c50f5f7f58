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
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
    languageOptions: { globals: globals.browser },
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
);
