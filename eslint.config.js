import js from '@eslint/js'
import tseslint from 'typescript-eslint'

// The public methods of `FileSystem` are the contract, written once in core: a backend or layer
// changes behaviour through the protected hooks, never by overriding one of these. (`fileUrl`,
// `contains` and `close` are the backend's to implement.) Tests may override them to build broken
// backends for the kit to catch.
const CONTRACT_METHODS =
  'resolve|processPath|stat|lstat|readText|streamText|streamBytes|openFile|listDir|listTree|writeText|editText|readBytes|writeBytes|remove|rename|createDirectory'
const NO_CONTRACT_OVERRIDE = {
  selector: `:matches(MethodDefinition, PropertyDefinition)[override=true][key.name=/^(${CONTRACT_METHODS})$/]`,
  message: "A public FileSystem method is the contract: change behaviour through its protected hook (see ARCHITECTURE.md, 'The hooks').",
}

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
    files: ['packages/*/src/**/*.ts', 'conformance/src/**/*.ts', 'conformance/examples/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_CONTRACT_OVERRIDE] },
  },
  {
    // Core owns the contract's failures: a backend builds them with FsError's named
    // constructors, so each message shape is written once (and cannot drift).
    files: ['packages/backend-*/src/**/*.ts', 'conformance/examples/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        NO_CONTRACT_OVERRIDE,
        {
          selector: "NewExpression[callee.name='FsError']",
          message: 'Build contract errors with the FsError named constructors (FsError.notFound(verb, path), FsError.stale(...), FsError.at(...)).',
        },
        {
          selector:
            "CallExpression[callee.object.name='FsError'][callee.property.name='at'][arguments.0.value=/^FS_(NOT_FOUND|NOT_DIRECTORY|NOT_REGULAR_FILE|STALE_VERSION|NOT_OBSERVED|TOO_LARGE|ABORTED|SANDBOX_DENIED)$/]",
          message:
            'This code has a named constructor (FsError.notFound, notDirectory, notRegularFile, stale, notObserved, tooLarge, aborted, sandboxDenied); use it.',
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
)
