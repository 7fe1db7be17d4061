/**
 * jest for the labextension's pure modules (model.ts): `jlpm test` or `jlpm jest`
 * from the repo root. Specs live beside the sources in labextension/src/__tests__.
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
