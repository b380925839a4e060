export * from './market';
export * from './aggregator';
export * from './trade';
export * from './deploy';
export * from './lookupTable';
export * from './marketState';
export * from './fees';
