export * from './solanaChain';
export * from './lamports';
export * from './errors';
export * from './transactions';
