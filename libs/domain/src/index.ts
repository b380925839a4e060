export * from './citizens/citizen';
export * from './citizens/decide';
export * from './ledgerModel';
export * from './kinds';
