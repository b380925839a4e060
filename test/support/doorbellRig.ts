import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import { kindOf } from '@svc/domain';
import { entries, projections, readModelMigrations } from '@svc/projections';
import { migrate, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { DoorbellStore } from '@svc/vault';
import { startDoorbellWorker, type DoorbellWorkerTuning, type RunningDoorbellWorker } from '@svc/app-workers';
import { DoorbellReceiver, RecordedAttempts } from './doorbellReceiver';
import { freshDatabase, tempDir, type FreshDatabase } from './env';

export const AGENT = 'agent_01JDOORBELLINTEGRATION0000';
export const OTHER_AGENT = 'agent_01JDOORBELLOTHERCITIZEN0';
export const SECRETS = ['int-secret-alpha-7f3a', 'int-secret-beta-91c2'];
export const MASTER_KEY = randomBytes(32);

/**
 * The doorbell store and its workers over a fresh PostgreSQL database, delivering to a real HTTPS receiver. The test
 * writes the ledger itself (`append`) and announces it as the projector would (`announce`), so workers wake as they do
 * in the service. Every log line and every recorded attempt is kept for the test to read.
 */
export class DoorbellRig {
  db!: FreshDatabase;
  database!: SqlDatabase;
  store!: DoorbellStore;
  receiver!: DoorbellReceiver;
  bus!: InProcessBus;
  readonly logLines: string[] = [];
  readonly log = pino(
    { level: 'debug' },
    new Writable({
      write: (chunk, _encoding, done) => {
        this.logLines.push(String(chunk));
        done();
      },
    }),
  );
  private readonly workers: RunningDoorbellWorker[] = [];
  /** Every attempt the workers record, as they record it: what the tests wait on. */
  readonly attempts = new RecordedAttempts();
  /** The ledger head: the seq of the last entry appended. */
  seq = -1;
  private unannounced: Array<{ seq: number; type: string }> = [];

  async start(label: string): Promise<this> {
    this.db = await freshDatabase(label);
    this.database = await openDatabase({ url: this.db.url, dataDir: tempDir(label) });
    await migrate(this.database.db, 'rm', readModelMigrations(projections));
    this.store = await new DoorbellStore(this.database, MASTER_KEY, entries.inSchema('rm')).init();
    this.receiver = await DoorbellReceiver.start();
    this.bus = new InProcessBus();
    return this;
  }

  /** Between tests: stops the workers, forgets every doorbell, and what arrived. */
  async reset(): Promise<void> {
    await this.stopWorkers();
    await this.database.db.deleteFrom('vault.doorbells').execute();
    this.receiver.clear();
    this.attempts.clear();
  }

  async close(): Promise<void> {
    await this.receiver?.close();
    await this.bus?.close();
    await this.database?.close();
    await this.db?.drop();
  }

  readonly append = async (type: string, data: Record<string, unknown>): Promise<number> => {
    this.seq += 1;
    const { seq } = this;
    const at = Date.now();
    const hash = randomBytes(32).toString('hex');
    const entry = { seq, type, at, actor: AGENT, data, prev: '0'.repeat(64), hash };
    await this.database.db.insertInto('rm.entries').values({ seq, type, kind: kindOf(type), at, actor: AGENT, hash, body: JSON.stringify(entry) }).execute();
    this.unannounced.push(entry);
    return seq;
  };

  /** What the projector announces after a batch, so workers wake as they do in the service. */
  readonly announce = async (): Promise<void> => {
    const entries = this.unannounced;
    this.unannounced = [];
    await this.bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: this.seq, from: entries[0]?.seq ?? this.seq, entries });
  };

  readonly post = (n: number) =>
    this.append('PostCreated', { post_id: `post_${n}`, body: `post ${n}`, mint: null, parent_id: null, root_id: null, parent_author_id: null, tags: [] });

  readonly worker = async (tuning: DoorbellWorkerTuning & { allowLoopback?: boolean; store?: DoorbellStore } = {}): Promise<RunningDoorbellWorker> => {
    const running = await startDoorbellWorker({
      store: this.store,
      bus: this.bus,
      log: this.log,
      allowLoopback: true,
      caFile: this.receiver.caFile,
      pollMs: 60_000,
      onAttemptRecorded: this.attempts.record,
      ...tuning,
    });
    this.workers.push(running);
    return running;
  };

  readonly register = async (path: string, options: { kinds?: string[]; secret?: string; url?: string; agentId?: string } = {}) => {
    const outcome = await this.store.register({
      agentId: options.agentId ?? AGENT,
      url: options.url ?? this.receiver.url(path),
      kinds: options.kinds ?? ['post', 'action', 'bounty'],
      secret: options.secret,
      ledgerHead: this.seq,
      limit: 3,
    });
    if (!outcome.ok) throw new Error('setup: registration refused');
    return outcome.doorbell;
  };

  readonly stopWorkers = () => Promise.all(this.workers.splice(0).map((w) => w.stop()));
  readonly delivered = (doorbellId: string) => this.attempts.of(doorbellId).filter((a) => a.status === 'delivered');

  readonly deliveryRows = (doorbellId: string) =>
    this.database.db.selectFrom('vault.doorbell_deliveries').selectAll().where('doorbell_id', '=', doorbellId).orderBy('seq').execute();
}
