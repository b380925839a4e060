export * from './validator';
export * from './common';
export * from './identity';
export * from './ledger';
