export * from './logger';
export * from './storage';
export * from './runtime';
