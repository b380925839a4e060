export * from './workers';
export * from './doorbellWorker';
export * from './delivery';
export * from './markets';
export * from './treasury';
export * from './portfolios';
export { guardedLookup, LOOPBACK_ALLOW_LIST, REFUSED_ADDRESS_CODE } from '@svc/runtime';
