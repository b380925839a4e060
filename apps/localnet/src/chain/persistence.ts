import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, writeFile, open } from 'node:fs/promises';
import { join } from 'node:path';
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

/**
 * Snapshot + write-ahead log under DATA_DIR/localnet. Every committed transaction is appended and
 * fdatasync'd before the RPC answers (appends arriving together share one sync); a snapshot of LiteSVM's
 * full state starts a new log generation, and the older generation is deleted only after the snapshot
 * is renamed into place.
 */
export class ChainStore {
  private fd: number | null = null;
  private generation = 0;
  private pending: { line: string; done: () => void; fail: (e: Error) => void }[] = [];
  private flushing = false;
  walLength = 0;

  private constructor(private readonly dir: string) {}

  static async open(dataDir: string): Promise<ChainStore> {
    const dir = join(dataDir, 'localnet');
    await mkdir(dir, { recursive: true });
    return new ChainStore(dir);
  }

  async load(): Promise<Saved | null> {
    let head: { generation: number };
    try {
      head = JSON.parse(await readFile(join(this.dir, 'HEAD'), 'utf8'));
    } catch {
      return null;
    }
    this.generation = head.generation;
    const state = await readFile(join(this.dir, `state-${head.generation}.bin`));
    const meta = JSON.parse(await readFile(join(this.dir, `meta-${head.generation}.json`), 'utf8')) as ChainMeta;
    const wal = await this.readWal(head.generation);
    this.walLength = wal.length;
    this.fd = openSync(join(this.dir, `wal-${head.generation}.log`), 'a');
    return { state, meta, wal };
  }

  private async readWal(generation: number): Promise<WalRecord[]> {
    let text: string;
    try {
      text = await readFile(join(this.dir, `wal-${generation}.log`), 'utf8');
    } catch {
      return [];
    }
    const records: WalRecord[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line));
      } catch {
        break; // a torn final write from a crash: it was never acknowledged
      }
    }
    return records;
  }

  append(record: WalRecord): Promise<void> {
    return new Promise((done, fail) => {
      this.pending.push({ line: `${JSON.stringify(record)}\n`, done, fail });
      this.walLength++;
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    try {
      if (this.fd === null) this.fd = openSync(join(this.dir, `wal-${this.generation}.log`), 'a');
      writeSync(this.fd, batch.map((p) => p.line).join(''));
      fdatasyncSync(this.fd);
      for (const p of batch) p.done();
    } catch (error) {
      for (const p of batch) p.fail(error as Error);
    }
    if (this.pending.length > 0) setImmediate(() => this.flush());
    else this.flushing = false;
  }

  async snapshot(state: Buffer, meta: ChainMeta): Promise<void> {
    while (this.flushing) await new Promise((r) => setImmediate(r));
    const next = this.generation + 1;
    await durableWrite(join(this.dir, `state-${next}.bin`), state);
    await durableWrite(join(this.dir, `meta-${next}.json`), Buffer.from(JSON.stringify(meta)));
    await durableWrite(join(this.dir, 'HEAD.tmp'), Buffer.from(JSON.stringify({ generation: next })));
    await rename(join(this.dir, 'HEAD.tmp'), join(this.dir, 'HEAD'));
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.generation = next;
    this.walLength = 0;
    for (const name of await readdir(this.dir)) {
      const match = /^(?:state|meta|wal)-(\d+)\./.exec(name);
      if (match && Number(match[1]) < next) await rm(join(this.dir, name), { force: true });
    }
  }

  async close(): Promise<void> {
    while (this.flushing) await new Promise((r) => setImmediate(r));
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

async function durableWrite(path: string, bytes: Buffer): Promise<void> {
  await writeFile(path, bytes);
  const handle = await open(path, 'r+');
  await handle.datasync();
  await handle.close();
}
