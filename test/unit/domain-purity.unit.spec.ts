// Deciders replay the ledger and are tested without I/O: loading @svc/domain must not load a driver, a
// server or an RPC client, not even through a barrel that re-exports one.
const IO_PACKAGES = ['pg', '@electric-sql/pglite', '@eventstore/db-client', 'ioredis', 'kysely', 'express', '@solana/web3.js'];

describe('libs/domain', () => {
  it('loads no I/O module', () => {
    const loaded = new Set<string>();
    for (const name of IO_PACKAGES) {
      jest.doMock(name, () => {
        loaded.add(name);
        return jest.requireActual(name);
      });
    }
    let domain: Record<string, unknown> = {};
    jest.isolateModules(() => {
      domain = require('@svc/domain');
    });
    expect(domain.ledgerModel).toBeDefined();
    expect([...loaded]).toEqual([]);
  });
});
