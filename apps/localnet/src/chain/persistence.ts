import { closeSync, existsSync, fdatasync, openSync, writeSync } from 'node:fs';
import { mkdir, open, readFile, readdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { singleWriterLock } from '@svc/readmodel';
import type { ChainMeta } from './localChain';

export interface WalRecord {
  wire: string;
  slot: number;
  at: number;
}

interface Saved {
  state: Buffer;
  meta: ChainMeta;
  wal: WalRecord[];
}

interface Pending {
  line: string;
  done: () => void;
  fail: (e: Error) => void;
}

/**
 * Snapshot + write-ahead log under DATA_DIR/localnet. Every committed transaction is appended and
 * fdatasync'd before the RPC answers (appends arriving together share one sync).
 *
 * A snapshot captures LiteSVM's state and, in the same tick, moves appends to the next log generation,
 * so the old log holds exactly what the snapshot contains. HEAD names the last complete snapshot; at
 * start its log and any later generations (from a snapshot that never completed) are replayed in order.
 */
export class ChainStore {
  private fd: number | null = null;
  private generation = 0;
  private pending: Pending[] = [];
  private flushScheduled = false;
  private snapshotting: Promise<void> | null = null;
  /**
   * The syncs issued so far, each after the one before, and the closing of a log a rotation left behind: an
   * fdatasync takes milliseconds, which on the thread pool the event loop (the service's too, when the chain is
   * bundled in its process) does not wait out.
   */
  private syncing: Promise<void> = Promise.resolve();
  walLength = 0;

  private constructor(
    private readonly dir: string,
    private readonly unlock: () => void,
  ) {}

  static async open(dataDir: string): Promise<ChainStore> {
    const dir = join(dataDir, 'localnet');
    await mkdir(dir, { recursive: true });
    // Two writers would interleave one log and overwrite each other's snapshots.
    const unlock = singleWriterLock(
      join(dir, 'localnet.lock'),
      (holder) => `the local chain in ${dir} is in use by process ${holder}; stop it, or use another DATA_DIR (or SOLANA_RPC_URL to use that chain)`,
    );
    return new ChainStore(dir, unlock);
  }

  private wal(generation: number): string {
    return join(this.dir, `wal-${generation}.log`);
  }

  async load(): Promise<Saved | null> {
    let head: { generation: number };
    try {
      head = JSON.parse(await readFile(join(this.dir, 'HEAD'), 'utf8'));
    } catch {
      return null;
    }
    const state = await readFile(join(this.dir, `state-${head.generation}.bin`));
    const meta = JSON.parse(await readFile(join(this.dir, `meta-${head.generation}.json`), 'utf8')) as ChainMeta;
    const wal: WalRecord[] = [];
    let generation = head.generation;
    for (;;) {
      wal.push(...(await this.readWal(generation)));
      if (!existsSync(this.wal(generation + 1))) break;
      generation++;
    }
    this.generation = generation;
    this.walLength = wal.length;
    this.fd = openSync(this.wal(generation), 'a');
    return { state, meta, wal };
  }

  /**
   * The records of one log generation. A torn last line (a crash mid-write: never acknowledged) is cut off
   * the file, so that later appends do not land glued to it; a bad line anywhere else is corruption.
   */
  private async readWal(generation: number): Promise<WalRecord[]> {
    let text: Buffer;
    try {
      text = await readFile(this.wal(generation));
    } catch {
      return [];
    }
    const records: WalRecord[] = [];
    let offset = 0;
    while (offset < text.length) {
      const end = text.indexOf(0x0a, offset);
      const line = text.subarray(offset, end < 0 ? text.length : end).toString('utf8');
      let record: WalRecord | null = null;
      try {
        record = JSON.parse(line) as WalRecord;
      } catch {
        record = null;
      }
      if (!record || end < 0) {
        if (end >= 0 && end + 1 < text.length) throw new Error(`${this.wal(generation)} is corrupt at byte ${offset}`);
        await truncate(this.wal(generation), offset);
        break;
      }
      records.push(record);
      offset = end + 1;
    }
    return records;
  }

  append(record: WalRecord): Promise<void> {
    return new Promise((done, fail) => {
      this.pending.push({ line: `${JSON.stringify(record)}\n`, done, fail });
      this.walLength++;
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    let fd: number;
    try {
      if (this.fd === null) this.fd = openSync(this.wal(this.generation), 'a');
      fd = this.fd;
      writeSync(fd, batch.map((p) => p.line).join(''));
    } catch (error) {
      for (const p of batch) p.fail(error as Error);
      return;
    }
    // Answered only once synced, as before: what a reply confirms survives a crash.
    this.syncing = this.syncing.then(
      () =>
        new Promise<void>((resolve) =>
          fdatasync(fd, (error) => {
            for (const p of batch) {
              if (error) p.fail(error);
              else p.done();
            }
            resolve();
          }),
        ),
    );
  }

  /** Closes a log once every sync issued on it is done. */
  private closeAfterSyncs(fd: number): void {
    this.syncing = this.syncing.then(() => closeSync(fd)).catch(() => undefined);
  }

  async settled(): Promise<void> {
    await this.snapshotting;
  }

  get busy(): boolean {
    return this.snapshotting !== null;
  }

  /** Call with state captured in the same tick: the log rotates before anything else can commit. */
  snapshot(state: Buffer, meta: Promise<Buffer>): Promise<void> {
    // Its failure is the snapshot's, seen when it is awaited after the state is written (or not at all when skipped).
    meta.catch(() => undefined);
    if (this.snapshotting) return this.snapshotting;
    this.flush();
    const next = this.generation + 1;
    if (this.fd !== null) this.closeAfterSyncs(this.fd);
    this.fd = openSync(this.wal(next), 'a');
    this.generation = next;
    this.walLength = 0;
    this.snapshotting = this.writeSnapshot(next, state, meta).finally(() => (this.snapshotting = null));
    return this.snapshotting;
  }

  private async writeSnapshot(generation: number, state: Buffer, meta: Promise<Buffer>): Promise<void> {
    await durableWrite(join(this.dir, `state-${generation}.bin`), state);
    await durableWrite(join(this.dir, `meta-${generation}.json`), await meta);
    await durableWrite(join(this.dir, 'HEAD.tmp'), Buffer.from(JSON.stringify({ generation })));
    await rename(join(this.dir, 'HEAD.tmp'), join(this.dir, 'HEAD'));
    for (const name of await readdir(this.dir)) {
      const match = /^(?:state|meta|wal)-(\d+)\./.exec(name);
      if (match && Number(match[1]) < generation) await rm(join(this.dir, name), { force: true });
    }
  }

  async close(): Promise<void> {
    await this.snapshotting;
    this.flush();
    await this.syncing;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.unlock();
  }
}

async function durableWrite(path: string, bytes: Buffer): Promise<void> {
  await writeFile(path, bytes);
  const handle = await open(path, 'r+');
  await handle.datasync();
  await handle.close();
}
