import type { Connection } from '@solana/web3.js';
import { recentBlockhash, type RecentBlockhash } from './transactions';

/** A blockhash younger than this is handed out as it is. */
const REFRESH_MS = 1_000;
/**
 * Until this age it is still handed out while a newer one is read: a blockhash lands for ~60 s (150 slots), so a
 * few seconds cost nothing, and no action waits on the read.
 */
const SERVE_WHILE_REFRESHING_MS = 5_000;

/**
 * The process's recent blockhash, read once a second at most however many actions take one: an action needs a
 * blockhash that is recent, not the newest. One read runs at a time; the connection may be swapped (the bundled
 * chain starts after the pipeline), and a blockhash of another connection is never handed out.
 */
export class BlockhashKeeper {
  private latest?: { connection: Connection; value: RecentBlockhash; at: number };
  private reading?: { connection: Connection; value: Promise<RecentBlockhash> };

  constructor(
    private readonly connection: () => Connection,
    private readonly now: () => number = Date.now,
  ) {}

  recent(): Promise<RecentBlockhash> {
    const connection = this.connection();
    const latest = this.latest?.connection === connection ? this.latest : undefined;
    const age = latest ? this.now() - latest.at : Infinity;
    if (latest && age < REFRESH_MS) return Promise.resolve(latest.value);
    const read = this.read(connection);
    if (latest && age < SERVE_WHILE_REFRESHING_MS) {
      // Its failure is the next caller's to see: this one has a blockhash that still lands.
      read.catch(() => undefined);
      return Promise.resolve(latest.value);
    }
    return read;
  }

  private read(connection: Connection): Promise<RecentBlockhash> {
    if (this.reading?.connection === connection) return this.reading.value;
    const startedAt = this.now();
    const value = recentBlockhash(connection).then(
      (recent) => {
        if (!this.latest || this.latest.connection !== connection || this.latest.at < startedAt) this.latest = { connection, value: recent, at: startedAt };
        return recent;
      },
    );
    const reading = { connection, value };
    this.reading = reading;
    const done = () => {
      if (this.reading === reading) this.reading = undefined;
    };
    value.then(done, done);
    return value;
  }
}
