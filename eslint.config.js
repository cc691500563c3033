import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './packages/*/tsconfig.json', './conformance/tsconfig.json', './bench/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Core owns the contract's failures: a backend builds them with FsError's named
    // constructors, so each message shape is written once (and cannot drift).
    files: ['packages/backend-*/src/**/*.ts', 'conformance/examples/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='FsError']",
          message: 'Build contract errors with the FsError named constructors (FsError.notFound(verb, path), FsError.stale(...), FsError.at(...)).',
        },
        {
          selector:
            "CallExpression[callee.object.name='FsError'][callee.property.name='at'][arguments.0.value=/^FS_(NOT_FOUND|NOT_DIRECTORY|NOT_REGULAR_FILE|STALE_VERSION|NOT_OBSERVED|TOO_LARGE|ABORTED)$/]",
          message: 'This code has a named constructor (FsError.notFound, notDirectory, notRegularFile, stale, notObserved, tooLarge, aborted); use it.',
        },
      ],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
)
