export * from './logger';
export * from './storage';
export * from './runtime';
export * from './process';
export * from './safeAgent';
export * from './treasury';
export * from './stateBuildThread';
