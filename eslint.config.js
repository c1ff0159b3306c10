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
  { ignores: ['node_modules/', '.data/', 'dist/', '.openapi.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
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
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
