// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'test-results/', '.scratch/', '.cache/', 'release/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    // DESIGN.md: the renderer never imports the core; it may import types from src/protocol.
    files: ['renderer/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src/(?!protocol/)',
              message: 'The renderer imports only types from src/protocol (DESIGN.md).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli.ts', 'src/cli/serve-command.ts', 'bench/**', 'test/**', 'renderer/dev/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The package's bin and the prepare script: plain JavaScript for Node, no build step.
    files: ['bin/**', 'scripts/**/*.mjs'],
    languageOptions: { globals: { URL: 'readonly', console: 'readonly', process: 'readonly' } },
    rules: { 'no-console': 'off' },
  },
);
