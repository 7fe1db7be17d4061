// ESLint for the labextension's TypeScript, after the JupyterLab extension template
// (jupyterlab/extension-template, eslint.config.mjs): typescript-eslint's and
// @jupyter/eslint-plugin's recommended rules, the template's house rules, prettier.
// Differences: the jest specs are linted too (with tsconfig.test.json, which includes
// them); no translation wrapper is required (see the rule below); warnings fail
// `lint:check` too. Every .js file (built output, tooling) is ignored.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import prettierRecommended from 'eslint-plugin-prettier/recommended';
import globals from 'globals';
import jupyterPlugin from '@jupyter/eslint-plugin';

export default defineConfig([
  {
    ignores: [
      'node_modules',
      'lib',
      'coverage',
      '**/*.js',
      '**/*.mjs',
      '**/*.d.ts',
      '.venv',
      '.venv-spark4',
      'jupyter_perf/labextension',
      'out'
    ]
  },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommended, jupyterPlugin.configs.recommended],
    plugins: {
      jupyter: jupyterPlugin
    }
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      globals: {
        ...globals.browser,
        ...globals.es2015,
        ...globals.node
      },
      parserOptions: {
        project: 'tsconfig.json',
        sourceType: 'module'
      }
    },
    rules: {
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: {
            regex: '^I[A-Z]',
            match: true
          }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-use-before-define': 'off',
      // Not the template's: jupyter_perf ships no translations (its CLI, report and
      // docs are English too), so wrapping strings in trans.__() would translate nothing.
      'jupyter/no-untranslated-string': 'off',
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error'
    }
  },
  {
    files: ['labextension/src/__tests__/**/*.ts'],
    languageOptions: {
      globals: { ...globals.jest },
      parserOptions: { project: 'tsconfig.test.json' }
    }
  },
  prettierRecommended
]);
