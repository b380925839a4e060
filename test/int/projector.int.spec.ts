import type { ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { InProcessBus, type Notification } from '@svc/bus';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { Projector, projections, readCheckpoint, rebuildReadModels, type Projection } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { killHard, spawnEntry } from '../support/spawn';
import { until } from '../support/until';
import { registerCitizenCommand } from '../support/ledgerModel';

const register = (n: number) => registerCitizenCommand(n, `h${n}`, { bio: `bio ${n}` });

/** Every read-model row in a stable order: two schemas with equal dumps hold the same read models. */
async function dump(database: SqlDatabase, schema: string): Promise<unknown> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['agents', 'entries', 'checkpoints']) {
    const rows = await sql.raw(`select * from ${schema}.${table} order by 1`).execute(database.db);
    out[table] = rows.rows.map((row: any) => {
      const { updated_at: _ignored, ...rest } = row;
      return rest;
    });
  }
  return out;
}

describe('the projector', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;

  async function writeLedger(n: number): Promise<void> {
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const from = writer.head.seq + 1;
    const outcomes = await Promise.all(Array.from({ length: n }, (_, i) => writer.execute(register(from + i))));
    if (!outcomes.every((o) => o.ok)) throw new Error('setup: a registration was refused');
  }

  beforeEach(async () => {
    db = await freshDatabase('projector');
    database = await openDatabase({ url: db.url, dataDir: tempDir('projector') });
    store = await new PostgresEventStore(database).init();
  });
  afterEach(async () => {
    await store.close();
    await database.close();
    await db.drop();
  });

  it('applies the same batch twice with the same rows as once', async () => {
    await writeLedger(40);
    const projector = await new Projector({ database, store, projections, schema: 'rm' }).init();
    const batch = await store.readForward(LEDGER_STREAM, 0, 40);
    expect(await projector.applyBatch(batch)).toHaveLength(40);
    const once = await dump(database, 'rm');
    // A crash after commit but before the next read replays the batch; so does a second projector.
    expect(await projector.applyBatch(batch)).toHaveLength(0);
    const stale = await new Projector({ database, store, projections, schema: 'rm' }).init();
    await stale.applyBatch(batch);
    expect(await dump(database, 'rm')).toEqual(once);
    // The rows themselves are idempotent too, even with the checkpoint moved back by hand.
    await sql`update rm.checkpoints set seq = -1`.execute(database.db);
    await new Projector({ database, store, projections, schema: 'rm' }).init().then((p) => p.applyBatch(batch));
    expect(await dump(database, 'rm')).toEqual(once);
  });

  it('announces a batch only after its transaction committed, and not at all when it failed', async () => {
    await writeLedger(10);
    // Another connection looks at the moment of each publish: inside the batch's transaction it
    // would still see the old checkpoint.
    const observer = await openDatabase({ url: db.url, dataDir: tempDir('observer') });
    const atPublish: Array<{ seq: number; visible: number }> = [];
    class ObservedBus extends InProcessBus {
      override async publish(channel: string, message: Notification): Promise<void> {
        atPublish.push({ seq: message.seq, visible: await readCheckpoint(observer.db, 'rm') });
        return super.publish(channel, message);
      }
    }
    const failing: Projection = {
      name: 'fails-at-7',
      canHandle: '*',
      migrations: [],
      async apply(_trx, _schema, entries) {
        if (entries.some(({ entry }) => entry.seq === 7)) throw new Error('boom');
      },
    };
    try {
      const projector = await new Projector({ database, store, bus: new ObservedBus(), projections: [...projections, failing], schema: 'rm' }).init();
      await projector.applyBatch(await store.readForward(LEDGER_STREAM, 0, 5));
      await expect(projector.applyBatch(await store.readForward(LEDGER_STREAM, 5, 5))).rejects.toThrow('boom');
      expect(atPublish).toEqual([{ seq: 4, visible: 4 }]);
      expect(await readCheckpoint(database.db, 'rm')).toBe(4);
      const rows = await sql<{ n: number }>`select count(*)::int as n from rm.entries`.execute(database.db);
      expect(rows.rows[0]!.n).toBe(5);
    } finally {
      await observer.close();
    }
  });

  it('rebuilds from zero beside the live read models and swaps to an identical copy', async () => {
    await writeLedger(120);
    const live = await new Projector({ database, store, projections, schema: 'rm', batchSize: 50 }).init();
    await live.catchUp();
    const before = await dump(database, 'rm');
    await sql`update rm.agents set bio = 'drifted'`.execute(database.db);
    const progress: number[] = [];
    const at = await rebuildReadModels({ database, store, projections, schema: 'rm', batchSize: 50, onProgress: (seq) => progress.push(seq) });
    expect(at).toBe(119);
    expect(progress).toContain(119);
    expect(await dump(database, 'rm')).toEqual(before);
  });

  it('rebuilds through npm run replay to the same read models', async () => {
    await writeLedger(300);
    const live = await new Projector({ database, store, projections, schema: 'rm' }).init();
    await live.catchUp();
    const before = await dump(database, 'rm');
    await sql`delete from rm.agents where handle like 'h1%'`.execute(database.db);
    const output = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawnEntry('scripts/replay.ts', [], {
        env: { ...process.env, DATABASE_URL: db.url, EVENTSTORE_URL: '', REDIS_URL: '', DATA_DIR: tempDir('replay') },
      });
      let text = '';
      child.stdout!.on('data', (chunk) => (text += chunk));
      child.stderr!.on('data', (chunk) => (text += chunk));
      child.on('exit', (code) => resolve({ code, text }));
    });
    expect(output.code).toBe(0);
    expect(output.text).toContain('read models rebuilt to seq 299 (300 entries)');
    expect(await dump(database, 'rm')).toEqual(before);
  }, 60_000);

  it('leaves read models identical to a clean rebuild after being killed with SIGKILL again and again', async () => {
    await writeLedger(1500);
    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      DATA_DIR: tempDir('projector-kill'),
      PROJECTOR_BATCH_SIZE: '7',
      PROJECTOR_HEALTH_PORT: '0',
      LOG_LEVEL: 'silent',
      REDIS_URL: '',
    };
    const start = (): ChildProcess => spawnEntry('apps/projector/src/main.ts', [], { env, stdio: 'ignore' });
    const checkpoint = () => readCheckpoint(database.db, 'rm').catch(() => -1);
    /** Resolves once the projector's checkpoint reaches `target`; fails if the projector dies first. */
    const past = (target: number, child: ChildProcess) =>
      until(`the projector's checkpoint at ${target}`, 180_000, async () => {
        const seq = await checkpoint();
        if (seq >= target) return seq;
        if (child.exitCode !== null) throw new Error(`projector exited with ${child.exitCode}`);
        return undefined;
      });
    const kills: number[] = [];
    for (const fraction of [0.15, 0.4, 0.65, 0.85]) {
      const child = start();
      const target = Math.floor(1500 * fraction) + Math.floor(Math.random() * 50);
      await past(target, child);
      await killHard(child);
      kills.push(await checkpoint());
    }
    const last = start();
    await past(1499, last);
    await killHard(last);
    expect(kills.every((seq, i) => i === 0 || seq >= kills[i - 1]!)).toBe(true);

    const clean = await new Projector({ database, store, projections, schema: 'rm_clean', batchSize: 500 }).init();
    await clean.catchUp();
    expect(await dump(database, 'rm')).toEqual(await dump(database, 'rm_clean'));
  }, 180_000);
});
