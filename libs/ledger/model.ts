// `@svc/ledger/model`: a path that tsc, tsx and jest all resolve without package exports.
export * from './src/model';
