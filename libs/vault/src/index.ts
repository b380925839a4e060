export * from './crypto';
export * from './vault';
export * from './wallet';
export * from './awardOutbox';
export * from './doorbells';
export * from './memory';
