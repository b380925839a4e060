export * from './db';
export * from './migrate';
export * from './batcher';
