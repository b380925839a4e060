export * from './solanaChain';
export * from './lamports';
export * from './errors';
export * from './transactions';
export * from './handout';
export * from './pipeline';
export * from './tokens';
export * from './venues';
