import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Rooms and doors (ARCHITECTURE.md): api/, mta/, inbound/ and worker/ import from shared/, never from each other.
const apart = (folder, others) => ({
  files: [`${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: others.map((o) => ({
          group: [`**/${o}/*`],
          message: `${folder}/ imports from shared/, never from ${o}/`,
        })),
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'dist/', 'dist-test/', '.openapi.json', 'web/src/api/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Small files and functions, by rule (STYLE.md 11): blank lines and comments do not count in a function.
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true, IIFEs: true }],
      // Prettier wraps code at 120; what it cannot wrap (strings, templates, regular expressions, URLs) may pass.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  apart('api', ['mta', 'inbound', 'worker']),
  apart('mta', ['api', 'inbound', 'worker']),
  apart('inbound', ['api', 'mta', 'worker']),
  apart('worker', ['api', 'mta', 'inbound']),
  apart('shared', ['api', 'mta', 'inbound', 'worker']),
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  // The reference page's script runs in the browser, after swagger-ui-bundle.js.
  {
    files: ['api/reference/*.js'],
    languageOptions: { globals: { document: 'readonly', SwaggerUIBundle: 'readonly' } },
  },
);
