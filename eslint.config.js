import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.spindle/**', 'dist/**', 'bench/reference/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // jax-js must be loaded by initEngine (after its Worker shim): values come from src/model/engine.ts.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: '@jax-js/jax', message: "Import np/jit/... from src/model/engine.ts (initEngine loads jax-js).", allowTypeImports: true }] },
      ],
    },
  },
  {
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
