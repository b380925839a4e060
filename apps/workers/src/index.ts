export * from './workers';
export * from './doorbellWorker';
export * from './delivery';
export * from './ssrf';
