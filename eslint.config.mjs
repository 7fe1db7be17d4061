// ESLint for the labextension's TypeScript, after the JupyterLab extension template
// (jupyterlab/extension-template, eslint.config.mjs): typescript-eslint's and
// @jupyter/eslint-plugin's recommended rules, the template's house rules, prettier.
// Differences: the jest specs are linted too (with tsconfig.test.json, which includes
// them); no translation wrapper is required (see the rule below); warnings fail
// `lint:check` too. Besides labextension/, the report's browser scripts
// (jupyter_perf/render/js/*.js) are linted, with their own block at the end; every other
// .js file (built output, tooling) is ignored.
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
      // ...except the report's browser scripts (see their block below)
      '!jupyter_perf/render/js/*.js',
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
  prettierRecommended,
  // The report's browser code (render/report.py inlines these three files, in this order,
  // as the body of one Bokeh CustomJS callback): plain scripts, no modules, ES2018 at most
  // (main.js spreads objects; report.js keeps to ES2017). format.js
  // is generated from labextension/src/format.ts (labextension/format-js.js) and linted
  // with the same rules. Prettier stays off for them: it would rewrite every file wholesale
  // (their house style is denser, and render/report.py strips indentation anyway).
  {
    files: ['jupyter_perf/render/js/*.js'],
    languageOptions: {
      ecmaVersion: 2018,
      sourceType: 'script',
      globals: {
        ...globals.browser,
        // defined by one file, used by the next: format.js -> report.js -> main.js
        JPF: 'readonly',
        JP: 'readonly',
        // the CustomJS callback's arguments (render/report.py, report_document)
        cb_obj: 'readonly',
        P: 'readonly',
        M: 'readonly',
        state: 'readonly',
        tl: 'readonly',
        sim: 'readonly',
        disk: 'readonly',
        network: 'readonly',
        slots: 'readonly',
        toggles: 'readonly',
        out: 'readonly',
        strag: 'readonly',
        selected: 'readonly',
        LIMIT: 'readonly',
        BINS: 'readonly',
        simAxis: 'readonly',
        ops: 'readonly',
        opInfo: 'readonly',
        stagesSrc: 'readonly',
        track: 'readonly'
      },
      parserOptions: {
        // main.js is a function body (CustomJS): it may return early
        ecmaFeatures: { globalReturn: true }
      }
    },
    rules: {
      'prettier/prettier': 'off',
      // JPF and JP are each file's one export: read by the next file, not by this one
      'no-unused-vars': ['error', { varsIgnorePattern: '^(JPF|JP)$' }],
      eqeqeq: 'error'
    }
  }
]);
