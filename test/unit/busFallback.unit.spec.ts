import { EventEmitter } from 'node:events';
import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import type { LedgerEntry } from '@svc/ledger';
import type { CheckpointFollower } from '../../apps/api/src/projectionWatcher';
import { PulseHub } from '../../apps/api/src/live/pulseHub';
import { WsHub, type PushSocket, type ReplaySource } from '../../apps/api/src/live/wsHub';
import type { Board } from '../../apps/api/src/live/board';
import { until } from '../support/until';

/** An in-process bus whose broker the test can take away. */
class FlakyBus extends InProcessBus {
  up = true;
  override get healthy(): boolean {
    return this.up;
  }
}

/** The read models' checkpoint as the hubs follow it: the test moves it, as polling the database would. */
class Checkpoint implements CheckpointFollower {
  seq = -1;
  followers = 0;
  private readonly listeners = new Set<(seq: number) => void>();

  onAdvance(listener: (seq: number) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  follow(): () => void {
    this.followers += 1;
    return () => void (this.followers -= 1);
  }

  advance(seq: number): void {
    this.seq = seq;
    for (const listener of this.listeners) listener(seq);
  }
}

class Socket extends EventEmitter {
  readyState = 1;
  bufferedAmount = 0;
  readonly received: Array<{ seq: number }> = [];
  send(frame: string, written?: (error?: Error) => void): void {
    this.received.push(JSON.parse(frame));
    this.emit('sent');
    written?.();
  }
  ping(): void {}
  terminate(): void {
    this.close();
  }
  close(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    setImmediate(() => this.emit('close'));
  }
}

function postEntry(seq: number): LedgerEntry & { kind: string } {
  return { seq, type: 'PostCreated', kind: 'post', at: 1_700_000_000_000 + seq, actor: 'agent_a', data: { post_id: `post_${seq}` }, prev: '0', hash: `h${seq}` } as unknown as LedgerEntry & {
    kind: string;
  };
}

describe('/ws without the bus', () => {
  let bus: FlakyBus;
  let hub: WsHub;
  let checkpoint: Checkpoint;
  let stored: Array<LedgerEntry & { kind: string }>;

  beforeEach(async () => {
    bus = new FlakyBus();
    checkpoint = new Checkpoint();
    stored = [];
    const source: ReplaySource = {
      entriesAfter: async (seq, limit) => stored.filter((e) => e.seq > seq).slice(0, limit),
      head: async () => stored.length - 1,
    };
    hub = new WsHub(bus, source, { checkpoint });
    await hub.start();
  });
  afterEach(async () => {
    await hub.stop();
    await bus.close();
  });

  const project = (count: number) => {
    const from = stored.length;
    for (let i = 0; i < count; i++) stored.push(postEntry(from + i));
    checkpoint.advance(stored.length - 1);
    return { from, entries: stored.slice(from) };
  };

  it('pushes from the read model, in order, while the bus is down, and follows the checkpoint only while a client is connected', async () => {
    const socket = new Socket();
    hub.attach(socket as unknown as PushSocket);
    expect(checkpoint.followers).toBe(1);
    bus.up = false;
    project(3);
    project(2);
    await until('five frames pushed', 2_000, () => socket.received.length === 5, 0);
    expect(socket.received.map((f) => f.seq)).toEqual([0, 1, 2, 3, 4]);
    socket.close();
    await until('the hub to stop following the checkpoint', 2_000, () => checkpoint.followers === 0, 0);
  });

  it('fills a gap in the announcements from the read model, and never pushes an entry twice', async () => {
    const socket = new Socket();
    hub.attach(socket as unknown as PushSocket);
    const first = project(2);
    await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: 1, from: first.from, entries: first.entries });
    // Announcements lost while Redis was away: the next one starts past what was pushed.
    project(3);
    const late = project(2);
    await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: 6, from: late.from, entries: late.entries });
    await until('seven frames pushed', 2_000, () => socket.received.length === 7, 0);
    // The lost announcement arrives after all: nothing is pushed twice.
    await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: 6, from: 2, entries: stored.slice(2) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.received.map((f) => f.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});

describe('/pulse?wait= without the bus', () => {
  it('wakes a held request when the checkpoint moves, with nothing on the bus', async () => {
    const bus = new FlakyBus();
    bus.up = false;
    const checkpoint = new Checkpoint();
    checkpoint.seq = 1;
    const board = (): Board => ({ citizens: 1, tokens: 0, trades: 0, posts_today: checkpoint.seq, open_bounties: 0, ledger: { seq: checkpoint.seq, hash: `h${checkpoint.seq}` }, last_post_at: 0 });
    const hub = new PulseHub(bus, async () => board(), () => checkpoint.seq, checkpoint);
    await hub.start();
    try {
      const before = await hub.state();
      const woken = hub.wait(before.etag, { seconds: 10, signal: new AbortController().signal });
      expect(checkpoint.followers).toBe(1);
      checkpoint.advance(2);
      expect(await woken).toBe('changed');
      expect(checkpoint.followers).toBe(0);
    } finally {
      await hub.stop();
      await bus.close();
    }
  });
});
