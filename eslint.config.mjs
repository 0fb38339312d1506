// @ts-check
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'media/dist/**', 'node_modules/**', 'test-results/**', 'demo/workspace/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node }, ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      curly: ['error', 'multi-line'],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='only'][callee.object.name=/^(it|describe|suite|test)$/]",
          message: 'No .only in committed tests.',
        },
      ],
    },
  },
  // Layers (docs/architecture.md): views/commands → actions → runner → store, common under all.
  // Each rule names what a layer may not import; `npm run lint` also fails on any circle of imports
  // in src/, media/src/ or bench/ (madge).
  {
    // actions, runner, store and common run in plain Node (tests, benchmark, maybe outside VS Code one day).
    files: ['src/actions/**', 'src/runner/**', 'src/store/**', 'src/common/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'vscode', message: 'src/actions, src/runner, src/store and src/common must stay vscode-free.' },
          ],
          patterns: [
            {
              group: ['**/commands/*', '**/views/*', '**/views/**'],
              message:
                'The layers below the editor never import commands or views (pass what they need in: actions/ports.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // The headless runner (src/cli) composes the vscode-free layers as root.ts does, outside VS Code.
    files: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/cli runs outside VS Code: it must stay vscode-free.' }],
          patterns: [
            {
              group: ['**/commands/*', '**/commands', '**/views/*', '**/views/**', '**/models/*', '**/editorMcp/*'],
              message: 'src/cli composes actions, runner, store and common; the editor layers need VS Code.',
            },
            {
              group: ['../settings', '../storeChoice', '../root', '../extension'],
              message: 'These import vscode: src/cli reads its own config (src/cli/config.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // The actions sit above the runner: the runner and the store never import them.
    files: ['src/runner/**', 'src/store/**', 'src/common/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'src/runner, src/store and src/common must stay vscode-free.' }],
          patterns: [
            {
              group: ['**/commands/*', '**/views/*', '**/views/**', '**/actions', '**/actions/**'],
              message: 'The runner, the store and common never import actions, commands or views.',
            },
          ],
        },
      ],
    },
  },
  {
    // Views call the actions with types and are handed what commands own (export) by the root: never a command module.
    files: ['src/views/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/commands/*', '**/commands'],
              message: 'src/views never imports src/commands: call src/actions, or take the function from root.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // The webview protocol is shared with the browser bundle: types and zod only.
    files: ['src/views/**/protocol.ts', 'media/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'Shared with the webview: no vscode here.' }],
          patterns: [{ group: ['**/commands/*', '**/commands'], message: 'src/views never imports src/commands.' }],
        },
      ],
    },
  },
  {
    // What both views show the same way (step summaries, labels, Markdown escaping): plain Node, unit-tested.
    files: ['src/views/shared/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'src/views/shared is vscode-free: both views and the tests use it.' }] },
      ],
    },
  },
  {
    files: ['media/src/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Layout is Prettier's (`npm run format`; checked by `npm run lint`): rules that fight it are off.
  prettier,
);
