// Test names say how far they reach (unit: no I/O; int: real Postgres/Redis; e2e: the running service).
const common = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs', ignoreDynamic: true } }] },
};
module.exports = {
  // Hooks without a timeout of their own get this one (a global option: projects ignore it): closing a service
  // (its chain, a last snapshot, its pools) and dropping its database took over jest's default 5 s on a loaded machine.
  testTimeout: 30_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.unit.spec.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/test/**/*.int.spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e.spec.ts'] },
    // The board in the system chromium, against the running service.
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.browser.spec.ts'] },
  ],
};
