export * from './crypto';
export * from './vault';
export * from './wallet';
export * from './doorbells';
export * from './memory';
export * from './idempotency';
export * from './chainOutbox';
