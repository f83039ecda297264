// ESLint (flat config): typescript-eslint and eslint-plugin-svelte, their recommended rules
// without type information (a typed lint of the whole tree is too slow for `npm run check` here),
// then eslint-config-prettier, which turns off every rule that Prettier's formatting decides.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import ts from 'typescript-eslint';

export default ts.config(
  { ignores: ['dist/', 'dist-cli/', 'node_modules/', 'test-artifacts/', '.vite/', '.vitest-attachments/', 'public/'] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  prettier,
  ...svelte.configs.prettier,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node, ...globals.worker } },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: ts.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    rules: {
      // Unused bindings are real findings; a leading underscore marks one kept on purpose (a port's parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // The screens keep Maps, Sets and Dates immutable in `$state.raw` and reassign them (or use them as
      // local temporaries); the rule flags every `new Map()` in a .svelte.ts file, none of them a missed update.
      'svelte/prefer-svelte-reactivity': 'off',
    },
  },
  {
    files: ['tests/**', 'bench/**', 'scripts/**'],
    rules: {
      // Tests and the bench read the CLI's JSON outputs without a type for every report shape.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
