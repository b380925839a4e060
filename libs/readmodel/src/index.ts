export * from './db';
export * from './migrate';
export * from './batcher';
export * from './lock';
export * from './liveness';
export * from './owed';
export * from './unavailable';
export * from './ids';
