import { randomInt } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { SqlDatabase } from './db';

/** The advisory-lock namespace of process liveness (two-key form), apart from the hashtext() locks of migrations and appends. */
const LIVENESS_LOCKS = 0x5356_4c56;
const RECONNECT_MS = 500;

/**
 * This process as the database sees it: a session advisory lock, held on a connection of its own for as long as
 * the process lives. A process that dies (SIGKILL, a crash, a host gone) closes that connection and the server
 * drops the lock, so a row stamped with a dead holder can be taken over at once instead of when its lease runs
 * out. Leases stay the bound for a holder that lives but hangs. Safety never rests on this: every takeover is
 * still guarded by the row's attempt id, so a holder wrongly judged dead loses its row, never doubles it.
 */
export class Liveness {
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    private readonly database: SqlDatabase,
    /** What rows this process holds are stamped with (a positive int4). */
    readonly holder: number,
    private readonly onLost: (error: unknown) => void,
    private readonly applicationName?: string,
  ) {}

  static async start(database: SqlDatabase, options: { applicationName?: string; onLost?: (error: unknown) => void } = {}): Promise<Liveness> {
    for (;;) {
      // A number another live process holds is taken already; one a dead process held is as good as new.
      const liveness = new Liveness(database, randomInt(1, 2 ** 31 - 1), options.onLost ?? (() => undefined), options.applicationName);
      if (await liveness.acquire()) return liveness;
    }
  }

  private async acquire(): Promise<boolean> {
    if (this.database.kind === 'pglite') {
      // One process, one session: the lock lives exactly as long as the embedded database does.
      const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_lock(${LIVENESS_LOCKS}, ${this.holder}) as got`.execute(this.database.db);
      return rows[0]!.got;
    }
    const client = new pg.Client({ connectionString: this.database.url, application_name: this.applicationName && `${this.applicationName}:liveness`, keepAlive: true });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('liveness connection ended')));
    try {
      await client.connect();
      // A host that vanishes without closing its socket is noticed by the server in about 25 s, not the default 2 h.
      await client.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3');
      const { rows } = await client.query<{ got: boolean }>('select pg_try_advisory_lock($1, $2) as got', [LIVENESS_LOCKS, this.holder]);
      if (!rows[0]!.got) {
        await client.end();
        return false;
      }
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    return true;
  }

  /** The connection broke (the server restarted, the network dropped): until it is back, this process looks dead. */
  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.onLost(error);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.acquire()
        .then((got) => {
          if (got) return;
          this.onLost(new Error(`liveness lock ${this.holder} is held by another session`));
          this.reconnect();
        })
        .catch(() => this.reconnect());
    }, RECONNECT_MS);
    this.retry.unref();
  }

  /** Lets go of the lock, as a process that dies does: whatever this process still holds may be taken over. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    if (this.database.kind === 'pglite') {
      await sql`select pg_advisory_unlock(${LIVENESS_LOCKS}, ${this.holder})`.execute(this.database.db).catch(() => undefined);
      return;
    }
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/**
 * True once the process that stamped `column` (a holder) is gone. A row without a holder (written before
 * liveness) is never judged gone: its lease alone decides.
 */
export function holderGone(column: string): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(column)} is not null and not exists (
    select 1 from pg_locks l
     where l.locktype = 'advisory' and l.granted and l.classid = ${sql.lit(LIVENESS_LOCKS)}::oid and l.objsubid = 2
       and l.objid = ${sql.ref(column)}::oid
       and l.database = (select d.oid from pg_database d where d.datname = current_database())))`;
}
