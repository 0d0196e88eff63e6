// Lint rules that protect this system's promises: a forgotten `await` on a Kafka send or a
// database commit loses data, so floating and misused promises are errors.
import tseslint from 'typescript-eslint';
import { architecture } from './eslint.architecture.js';

export default tseslint.config(
  { ignores: ['node_modules/**', '.local/**', 'dist/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'it', 'describe', 'suite', 'before', 'after'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // `.only` and `.skip` in tests hide failures: see conventions.md.
      'no-restricted-properties': [
        'error',
        { object: 'test', property: 'only', message: 'Focused tests hide the rest of the suite.' },
        { object: 'describe', property: 'only', message: 'Focused tests hide the rest of the suite.' },
        { object: 'it', property: 'only', message: 'Focused tests hide the rest of the suite.' },
        { object: 'test', property: 'skip', message: 'Explain or remove skipped tests.' },
        { object: 'describe', property: 'skip', message: 'Explain or remove skipped tests.' },
        { object: 'it', property: 'skip', message: 'Explain or remove skipped tests.' },
      ],
    },
  },
  {
    // Tests assert on JSON bodies from the server; typing every body would only restate the assertions.
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Callbacks handed to code that expects promises (handlers, recorders) may not need to await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  // Who may import whom in src/, and each vendor SDK only in its wrapper.
  ...architecture,
  {
    files: ['bin/**/*.js', 'eslint.config.js', 'eslint.architecture.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
