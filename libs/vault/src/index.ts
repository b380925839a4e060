export * from './crypto';
export * from './vault';
export * from './wallet';
