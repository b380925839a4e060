import { EventEmitter, once } from 'node:events';
import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import type { LedgerEntry } from '@svc/ledger';
import { MAX_BUFFERED_BYTES, WsHub, type PushSocket, type ReplaySource } from '../../apps/api/src/live/wsHub';

/**
 * A socket whose reader the test plays: frames sent stay buffered (counted in bufferedAmount) until the
 * test reads them. It records the largest backlog it ever held.
 */
class ReaderSocket extends EventEmitter {
  readyState = 1;
  bufferedAmount = 0;
  maxBuffered = 0;
  terminated = false;
  readonly received: any[] = [];
  private queue: Array<{ frame: string; bytes: number; written?: (error?: Error) => void }> = [];

  send(frame: string, written?: (error?: Error) => void): void {
    const bytes = Buffer.byteLength(frame);
    this.queue.push({ frame, bytes, written });
    this.bufferedAmount += bytes;
    this.maxBuffered = Math.max(this.maxBuffered, this.bufferedAmount);
    this.emit('sent');
  }

  /** The client reads everything sent so far. */
  read(): void {
    for (const { frame, bytes, written } of this.queue.splice(0)) {
      this.bufferedAmount -= bytes;
      this.received.push(JSON.parse(frame));
      written?.();
    }
  }

  ping(): void {}

  terminate(): void {
    this.terminated = true;
    this.closeNow();
  }

  close(): void {
    this.closeNow();
  }

  private closeNow(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    for (const { written } of this.queue.splice(0)) written?.(new Error('closed'));
    setImmediate(() => this.emit('close'));
  }
}

const BIG = 'x'.repeat(12_000);

function postEntry(seq: number, body = BIG): LedgerEntry & { kind: string } {
  return { seq, type: 'PostCreated', kind: 'post', at: 1_700_000_000_000 + seq, actor: 'agent_a', data: { post_id: `post_${seq}`, body }, prev: '0', hash: `h${seq}` } as unknown as LedgerEntry & { kind: string };
}

/** The entries read model, holding seq 0..count-1. */
function readModel(count: number): ReplaySource & { entries: Array<LedgerEntry & { kind: string }> } {
  const entries = Array.from({ length: count }, (_, seq) => postEntry(seq));
  return {
    entries,
    entriesAfter: async (seq, limit) => entries.filter((e) => e.seq > seq).slice(0, limit),
    head: async () => entries.length - 1,
  };
}

describe('WsHub', () => {
  let bus: InProcessBus;
  let hub: WsHub;

  afterEach(async () => {
    await hub?.stop();
    await bus?.close();
  });

  async function start(source: ReplaySource): Promise<void> {
    bus = new InProcessBus();
    hub = new WsHub(bus, source);
    await hub.start();
  }

  const live = (from: number, count: number) =>
    bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: from + count - 1, entries: Array.from({ length: count }, (_, i) => postEntry(from + i)) });

  it('drops a client whose replay stalls once the live frames held for it pass the bound', async () => {
    const source = readModel(200);
    await start(source);
    const socket = new ReaderSocket();
    hub.attach(socket as unknown as PushSocket, -1);
    // The client reads nothing: the replay stops at its high-water mark and live frames are held back.
    await once(socket, 'sent');
    let published = 0;
    while (!socket.terminated && published < 400) {
      await live(200 + published, 10);
      published += 10;
      await new Promise((resolve) => setImmediate(resolve));
      expect(hub.backlogBytes).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + 10 * 13_000);
    }
    expect(socket.terminated).toBe(true);
    expect(published * 12_000).toBeLessThan(2 * MAX_BUFFERED_BYTES);
    await once(socket, 'close');
    expect(hub.size).toBe(0);
    expect(hub.backlogBytes).toBe(0);
  });

  it('replays a large backlog at the pace of a slow reader, never past the bound, then goes live without a gap or a repeat', async () => {
    const source = readModel(1200);
    await start(source);
    const socket = new ReaderSocket();
    hub.attach(socket as unknown as PushSocket, 99);
    // Live entries arrive during the replay, some of them still in the page the replay reads.
    let published = false;
    while (socket.received.at(-1)?.seq !== 1209 && !socket.terminated) {
      if (socket.bufferedAmount === 0) await Promise.race([once(socket, 'sent'), once(socket, 'close')]);
      socket.read();
      if (!published && socket.received.length > 300) {
        source.entries.push(postEntry(1200), postEntry(1201));
        await live(1195, 15);
        published = true;
      }
    }
    expect(socket.terminated).toBe(false);
    expect(socket.maxBuffered).toBeLessThanOrEqual(MAX_BUFFERED_BYTES);
    expect(socket.received.map((frame) => frame.seq)).toEqual(Array.from({ length: 1110 }, (_, i) => 100 + i));
    await live(1210, 1);
    await once(socket, 'sent');
    socket.read();
    expect(socket.received.at(-1).seq).toBe(1210);
  });

  it('drops a live client that stops reading once its backlog passes the bound', async () => {
    await start(readModel(0));
    const reader = new ReaderSocket();
    const stalled = new ReaderSocket();
    hub.attach(reader as unknown as PushSocket);
    hub.attach(stalled as unknown as PushSocket);
    for (let from = 0; !stalled.terminated; from += 10) {
      await live(from, 10);
      await once(reader, 'sent');
      reader.read();
    }
    expect(stalled.maxBuffered).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + 10 * 13_000);
    await once(stalled, 'close');
    expect(hub.size).toBe(1);
  });
});
