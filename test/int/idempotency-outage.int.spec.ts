import { randomBytes, randomUUID } from 'node:crypto';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { IdempotencyStore, idempotencyRequestHash, Vault, type IdempotencyBegin, type StoredResponse } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { TcpProxy } from '../support/faults';

/** Any key: what is tested is how requests compare under one. */
const HASH_KEY = Buffer.alloc(32, 1);

jest.setTimeout(60_000);

const SCOPE = 'agent_01JIDEMPOTENCYOUTAGE00000';
const HASH = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/transfer', { to: 'bob', amount: 0.1 });

function ran(outcome: IdempotencyBegin): string {
  if (outcome.kind !== 'run') throw new Error(`expected to run, got ${JSON.stringify(outcome)}`);
  return outcome.attempt;
}

/**
 * A request that fails while PostgreSQL is away cannot tell the database it let go of its key. The key must not
 * then look held by its live process for the whole lease: the store says it again once the database is back.
 */
describe('Idempotency-Key rows whose holder failed while the database was away', () => {
  let db: FreshDatabase;
  let proxy: TcpProxy;
  /** The API process whose database goes away. */
  let cut: SqlDatabase;
  let store: IdempotencyStore;
  /** Another API process, which keeps its database. */
  let direct: SqlDatabase;
  let other: IdempotencyStore;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await freshDatabase('idempotency_outage');
    proxy = await TcpProxy.to(db.url);
    direct = await openDatabase({ url: db.url, dataDir: tempDir('idempotency-outage'), poolSize: 4 });
    other = (await new Vault(direct, masterKey).init()).idempotency;
    cut = await openDatabase({ url: proxy.via(db.url), dataDir: tempDir('idempotency-outage-cut'), poolSize: 4 });
    store = new IdempotencyStore(cut, masterKey, { tuning: { owedRetryMs: 50 } });
  });
  afterAll(async () => {
    store?.close();
    other?.close();
    await proxy?.start();
    await cut?.close();
    await direct?.close();
    await proxy?.stop();
    await db?.drop();
  });

  it.each([
    ['lets go after a fault', (s: IdempotencyStore, key: string, attempt: string) => s.letGo(SCOPE, key, attempt), true],
    ['frees the key', (s: IdempotencyStore, key: string, attempt: string) => s.abandon(SCOPE, key, attempt), false],
  ])('%s once the database is back, so a retry elsewhere runs long before the lease ends', async (_what, settle, resumed) => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    await proxy.stop();
    await expect(settle(store, key, attempt)).rejects.toThrow();
    await proxy.start();
    const began = Date.now();
    const retry = await other.begin(SCOPE, key, HASH, { waitMs: 10_000 });
    expect(retry).toMatchObject({ kind: 'run', resumed });
    // The lease is 30 s: the retry got the key from the said-again word, not from the lease running out.
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('stores a reply the database did not take, so a retry replays it instead of running again', async () => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    const reply: StoredResponse = { status: 200, body: { ok: true, signature: 'sig' }, headers: {} };
    await proxy.stop();
    await expect(store.complete(SCOPE, key, attempt, reply)).rejects.toThrow();
    await proxy.start();
    expect(await other.begin(SCOPE, key, HASH, { waitMs: 10_000 })).toEqual({ kind: 'replay', ...reply });
  });
});
