import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.dependency-cruiser.cjs'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // Numbers and booleans in messages read naturally; objects still may not be interpolated.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => stream.write(x)` as a callback is idiomatic; a void value used anywhere else is still an error.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'ollama', message: "import 'ollama/browser': the Node build reads a local file named by any image string that names one" }] }],
    },
  },
  {
    // Plain-JavaScript files (the build script, the benchmark's two helpers, the test MCP server) run without any loader; they carry no types to check.
    files: ['build.mjs', 'test/bench/*.mjs', 'test/support/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // Tests, benchmarks and the protocol stand-in may print freely.
    files: ['test/**'],
    rules: { 'no-console': 'off' },
  },
);
