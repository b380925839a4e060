export * from './chain';
export * from './eventStore';
export * from './postgresEventStore';
export * from './esdbEventStore';
export * from './journal';
export * from './snapshotStore';
export * from './ledgerWriter';
export * from './attestor';
