export * from './solanaChain';
export * from './lamports';
export * from './errors';
export * from './transactions';
export * from './tokens';
export * from './venues';
export * from './pda';
export * from './funds';
