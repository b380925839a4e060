import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import { entries, projections, readModelMigrations } from '@svc/projections';
import { migrate, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { DoorbellStore } from '@svc/vault';
import { startDoorbellWorker, type RunningDoorbellWorker } from '@svc/app-workers';
import { DoorbellReceiver, timestampedSignature } from '../support/doorbellReceiver';
import { tempDir } from '../support/env';

const AGENT = 'agent_01JDOORBELLPGLITE000000000';

/** `npm start`'s shape: the same store and worker on PGlite (the embedded database), one process. */
describe('doorbells on the embedded database (PGlite)', () => {
  let database: SqlDatabase;
  let store: DoorbellStore;
  let receiver: DoorbellReceiver;
  let worker: RunningDoorbellWorker;
  const bus = new InProcessBus();

  beforeAll(async () => {
    database = await openDatabase({ dataDir: tempDir('doorbell-pglite') });
    await migrate(database.db, 'rm', readModelMigrations(projections));
    store = await new DoorbellStore(database, randomBytes(32), entries.inSchema('rm')).init();
    receiver = await DoorbellReceiver.start();
    worker = await startDoorbellWorker({ store, bus, log: pino({ level: 'silent' }), allowLoopback: true, caFile: receiver.caFile, pollMs: 60_000, backoffBaseMs: 10, backoffMaxMs: 20 });
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await bus.close();
    await database?.close();
  });

  it('registers within the cap, fans out, delivers signed, retries, logs and replays', async () => {
    const outcomes = await Promise.all(
      ['/a', '/b', '/c', '/d'].map((path) => store.register({ agentId: AGENT, url: receiver.url(path), kinds: ['post'], secret: 'pglite-secret', ledgerHead: -1, limit: 3 })),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    const urls = (await store.list(AGENT)).map((d) => d.url);
    receiver.answer(new URL(urls[0]!).pathname, 503);

    const entry = { seq: 0, type: 'PostCreated', at: Date.now(), actor: AGENT, data: { post_id: 'post_1', body: 'x' }, prev: '0'.repeat(64), hash: 'ab'.repeat(32) };
    await database.db.insertInto('rm.entries').values({ seq: 0, type: entry.type, kind: 'post', at: entry.at, actor: AGENT, hash: entry.hash, body: JSON.stringify(entry) }).execute();
    await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: 0, from: 0, entries: [entry] });

    const healthy = urls.slice(1).map((u) => new URL(u).pathname);
    await receiver.waitFor(() => healthy.every((p) => receiver.on(p).length === 1) && receiver.on(new URL(urls[0]!).pathname).length >= 3);
    for (const p of healthy) {
      const [request] = receiver.on(p);
      expect(request!.headers['x-svc-signature']).toBe(timestampedSignature(request!, 'pglite-secret'));
    }
    const page = await store.deliveries(AGENT, { limit: 10 });
    expect(page.items).toHaveLength(3);
    const failing = page.items.find((d) => d.last_http_status === 503)!;
    expect(failing.log.length).toBeGreaterThanOrEqual(2);

    const delivered = page.items.find((d) => d.status === 'delivered')!;
    expect(await store.replayDelivery(AGENT, delivered.id, 10)).toEqual({ ok: true, requeued: 1, nextAfterSeq: null });
    worker.wake();
    await receiver.waitFor(() => receiver.requests.filter((r) => r.headers['x-svc-delivery'] === delivered.id).length === 2);
    const replayAll = await store.replayAfter(AGENT, delivered.doorbell_id, -1, 10);
    expect(replayAll).toMatchObject({ ok: true, nextAfterSeq: null });
  });
});
