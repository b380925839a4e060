import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import { boardEtag, etagMatches, keyedEtag, type Board } from '../../apps/api/src/live/board';
import { PulseHub, type Wake } from '../../apps/api/src/live/pulseHub';

const boardAt = (seq: number): Board => ({ citizens: 1, tokens: 0, trades: 0, posts_today: seq, open_bounties: 0, ledger: { seq, hash: `h${seq}` }, last_post_at: seq });

/** The read models as the hub sees them: a ledger position, and board reads the test can watch and fail. */
class ReadModels {
  seq = 1;
  reads = 0;
  failures = 0;
  private watchers: Array<() => void> = [];

  readonly load = async (): Promise<Board> => {
    this.reads += 1;
    for (const watcher of this.watchers.splice(0)) watcher();
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('the database is away');
    }
    return boardAt(this.seq);
  };

  readonly position = () => this.seq;

  /** Resolves when the hub next reads the board. */
  nextRead(): Promise<void> {
    return new Promise((resolve) => this.watchers.push(resolve));
  }
}

describe('PulseHub', () => {
  let bus: InProcessBus;
  let models: ReadModels;
  let hub: PulseHub;
  const never = () => new AbortController().signal;

  beforeEach(async () => {
    bus = new InProcessBus();
    models = new ReadModels();
    hub = new PulseHub(bus, models.load, models.position);
    await hub.start();
  });
  afterEach(async () => {
    await hub.stop();
    await bus.close();
  });

  /** The projector announces `seq` and the hub hears it; with requests held on the board, it reads the board. */
  async function projected(seq: number, readsBoard = hub.held > 0): Promise<void> {
    models.seq = seq;
    const read = readsBoard ? models.nextRead() : undefined;
    let heard!: () => void;
    const delivered = new Promise<void>((resolve) => (heard = resolve));
    // Subscribed after the hub: the bus calls the hub first.
    const unsubscribe = await bus.subscribe(PROJECTED_CHANNEL, () => heard());
    await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq });
    await delivered;
    await unsubscribe();
    await read;
  }

  it('wakes every waiter of a board with one read when the ledger moves', async () => {
    const before = await hub.state();
    const waits = Array.from({ length: 50 }, () => hub.wait(before.etag, { seconds: 30, signal: never() }));
    expect(hub.held).toBe(50);
    await projected(2);
    expect(await Promise.all(waits)).toEqual(Array(50).fill('changed'));
    expect(models.reads).toBe(2);
    expect((await hub.state()).board.ledger.seq).toBe(2);
    expect(models.reads).toBe(2);
    expect(hub.held).toBe(0);
  });

  it('lets a waiter go at once when the board changed between its read and its wait', async () => {
    // The route reads the board, then (with a key) queries the inbox; a post lands meanwhile.
    const seen = await hub.state();
    await projected(2);
    await hub.state();
    const started = Date.now();
    expect(await hub.wait(seen.etag, { seconds: 5, signal: never() })).toBe('changed');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(hub.held).toBe(0);
  });

  it('reads no board for the changes it hears while no request is held, and one for the next request', async () => {
    await hub.state();
    for (let seq = 2; seq <= 11; seq++) await projected(seq);
    expect(models.reads).toBe(1);
    expect((await hub.state()).board.ledger.seq).toBe(11);
    expect(models.reads).toBe(2);
  });

  it('wakes a waiter at once when a change it did not read came before it was held', async () => {
    // The route reads the board, a post is projected while no request is held (so nothing reads it), then
    // the route holds the request with the board it read.
    const seen = await hub.state();
    await projected(2);
    expect(models.reads).toBe(1);
    // Held for less than the test may run: a waiter no read wakes fails here with 'timeout'.
    expect(await hub.wait(seen.etag, { seconds: 2, signal: never() })).toBe('changed');
    expect(models.reads).toBe(2);
    expect(hub.held).toBe(0);
  });

  it('keeps holding while the board is still, and times out', async () => {
    const now = await hub.state();
    expect(await hub.wait(now.etag, { seconds: 0.05, signal: never() })).toBe('timeout');
    const gone = new AbortController();
    const waiting = hub.wait(now.etag, { seconds: 30, signal: gone.signal });
    gone.abort();
    expect(await waiting).toBe('aborted');
    expect(models.reads).toBe(1);
  });

  it('does not keep a failed board read: the next request reads again', async () => {
    models.failures = 1;
    await expect(hub.state()).rejects.toThrow('the database is away');
    expect((await hub.state()).board.ledger.seq).toBe(1);
    expect(models.reads).toBe(2);
  });

  it('wakes waiters after a failed read once a later read succeeds', async () => {
    const before = await hub.state();
    const waiting = hub.wait(before.etag, { seconds: 30, signal: never() });
    models.failures = 1;
    await projected(2);
    await projected(3);
    expect(await waiting).toBe('changed');
    expect((await hub.state()).board.ledger.seq).toBe(3);
  });

  it("lets a citizen's held requests go when that citizen acks, and no one else's", async () => {
    const now = await hub.state();
    const other = new AbortController();
    const alice = hub.wait(now.etag, { seconds: 30, signal: never(), agentId: 'agent_alice' });
    const bob = hub.wait(now.etag, { seconds: 30, signal: other.signal, agentId: 'agent_bob' });
    const anonymous = hub.wait(now.etag, { seconds: 30, signal: other.signal });
    await hub.announceAck('agent_alice');
    expect(await alice).toBe('acked');
    expect(hub.held).toBe(2);
    other.abort();
    expect(await Promise.all([bob, anonymous])).toEqual(['aborted', 'aborted']);
  });

  it('holds a /changes wait on the position alone: woken once the ledger passes it, with no board read', async () => {
    const waits = Array.from({ length: 20 }, () => hub.waitPast(2, { seconds: 30, signal: never() }));
    expect(hub.held).toBe(20);
    await projected(2, false);
    expect(hub.held).toBe(20);
    await projected(3, false);
    expect(await Promise.all(waits)).toEqual(Array(20).fill('changed'));
    expect(models.reads).toBe(0);
    expect(await hub.waitPast(2, { seconds: 30, signal: never() })).toBe('changed');
    expect(await hub.waitPast(3, { seconds: 0.05, signal: never() })).toBe('timeout');
    expect(hub.held).toBe(0);
  });

  it('answers held requests on stop, waits until they are answered, and holds nothing after', async () => {
    const now = await hub.state();
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const events: Array<Wake | 'answered' | 'stopped'> = [];
    void hub.wait(now.etag, { seconds: 30, signal: never(), answered }).then((why) => {
      events.push(why);
      // The route answers on a later turn of the event loop.
      setImmediate(() => {
        events.push('answered');
        answer();
      });
    });
    await hub.stop();
    events.push('stopped');
    expect(events).toEqual(['stopping', 'answered', 'stopped']);
    expect(await hub.wait(now.etag, { seconds: 30, signal: never() })).toBe('stopping');
    expect(hub.held).toBe(0);
  });
});

describe('pulse ETags', () => {
  it('name the board alone, the same on every process', () => {
    expect(boardEtag(boardAt(3))).toBe(boardEtag({ ...boardAt(3) }));
    expect(boardEtag(boardAt(3))).not.toBe(boardEtag(boardAt(4)));
    expect(boardEtag(boardAt(3))).toMatch(/^W\/"[\w-]+"$/);
    expect(keyedEtag(boardEtag(boardAt(3)), true)).not.toBe(keyedEtag(boardEtag(boardAt(3)), false));
  });

  it('match If-None-Match weakly: W/ optional, lists, and *', () => {
    const tag = keyedEtag(boardEtag(boardAt(3)), false);
    const strong = tag.slice(2);
    expect(etagMatches(tag, tag)).toBe(true);
    expect(etagMatches(strong, tag)).toBe(true);
    expect(etagMatches(`"other", ${strong}`, tag)).toBe(true);
    expect(etagMatches('*', tag)).toBe(true);
    expect(etagMatches(boardEtag(boardAt(4)), tag)).toBe(false);
    expect(etagMatches(undefined, tag)).toBe(false);
  });
});
