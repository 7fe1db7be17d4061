/**
 * jest for the labextension's pure modules (format, row, cells, runlist, settings,
 * version, reportpayload; types.ts has no code): `jlpm test` from the repo root. One spec per module, in
 * labextension/src/__tests__/<module>.spec.ts.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/labextension/src'],
  testMatch: ['**/__tests__/**/*.spec.ts'],
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }]
  },
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json']
};
