import { randomBytes } from 'node:crypto';
import { Connection } from '@solana/web3.js';
import pg from 'pg';
import { freshDatabase, tempDir, type FreshDatabase } from './env';
import { closeConnection, startLocalnetChild } from './localnet';
import { startChild, type ChildService } from './spawn';

/**
 * What a crash test kills: the service as `npm start` runs it, in processes of its own over a fresh database, beside
 * a chain in a process of its own that keeps running (a real chain does not crash with the service), so a
 * transaction sent just before a kill goes on to confirm while nobody is there to record it.
 */
export class CrashRig {
  /** Every process the rig started, the chain first, with all each wrote. */
  readonly children: ChildService[] = [];
  private readonly masterKey = randomBytes(32).toString('base64');

  private constructor(
    private readonly dataDir: string,
    readonly db: FreshDatabase,
    readonly localnet: ChildService,
    readonly connection: Connection,
    /** A session on the service's database, to watch its outbox and leases from outside. */
    readonly sql: pg.Client,
  ) {
    this.children.push(localnet);
  }

  static async start(label: string): Promise<CrashRig> {
    const db = await freshDatabase(label);
    const localnet = await startLocalnetChild(tempDir(`${label}-chain`)).catch(async (error) => {
      await db.drop();
      throw error;
    });
    const sql = new pg.Client({ connectionString: db.url });
    const rig = new CrashRig(tempDir(label), db, localnet, new Connection(localnet.url, 'confirmed'), sql);
    await sql.connect().catch(async (error) => {
      await rig.close();
      throw error;
    });
    return rig;
  }

  /**
   * `npm start` on the rig's database and chain, `env` added. Every start is the same service (master key and data
   * directory), so one started after a kill finds what the killed one left.
   */
  async startService(env: Record<string, string> = {}): Promise<ChildService> {
    const child = await startChild('scripts/start.ts', [], {
      DATABASE_URL: this.db.url,
      EVENTSTORE_URL: '',
      REDIS_URL: '',
      SERVICE_MASTER_KEY: this.masterKey,
      DATA_DIR: this.dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      SOLANA_RPC_URL: this.localnet.url,
      PRICE_URL: this.localnet.url,
      LOG_LEVEL: 'info',
      ...env,
    });
    this.children.push(child);
    return child;
  }

  /** SIGKILLs whatever the test left running, and drops the database. */
  async close(): Promise<void> {
    for (const child of this.children) await child.kill().catch(() => undefined);
    await closeConnection(this.connection);
    await this.sql.end().catch(() => undefined);
    await this.db.drop();
  }
}
