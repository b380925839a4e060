import { randomUUID } from 'node:crypto';
import { PostgresEventStore, type NewEvent, type StoredEvent } from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

/** Long enough that a subscriber which missed a wake never reads again within a test. */
const NO_FALLBACK_MS = 10 * 60_000;

function events(n: number, tag: string): NewEvent[] {
  return Array.from({ length: n }, (_, i) => ({ id: randomUUID(), type: 'Tested', data: JSON.stringify({ i, tag, text: 'é ✓' }) }));
}

/** Two processes' stores on one database: `mine` subscribes and appends, `theirs` appends in between. */
describe('PostgreSQL event store: live subscribers', () => {
  let db: FreshDatabase;
  const databases: SqlDatabase[] = [];
  let mine: PostgresEventStore;
  let theirs: PostgresEventStore;
  const stream = () => `s-${randomUUID()}`;

  beforeAll(async () => {
    db = await freshDatabase('es_live');
    for (const name of ['mine', 'theirs']) databases.push(await openDatabase({ url: db.url, dataDir: tempDir(`es-live-${name}`) }));
    mine = await new PostgresEventStore(databases[0]!, 'es', NO_FALLBACK_MS).init();
    theirs = await new PostgresEventStore(databases[1]!, 'es', NO_FALLBACK_MS).init();
  }, 60_000);
  afterAll(async () => {
    await mine.close();
    await theirs.close();
    for (const database of databases) await database.close();
    await db.drop();
  });

  /** Feeds each event the subscriber takes to `onEvent` before it asks for the next, until `n` are taken. */
  async function follow(s: string, n: number, onEvent: (event: StoredEvent) => Promise<void>, subscriber = mine): Promise<StoredEvent[]> {
    const controller = new AbortController();
    const taken: StoredEvent[] = [];
    try {
      for await (const event of subscriber.subscribe(s, 0, controller.signal)) {
        taken.push(event);
        await onEvent(event);
        if (taken.length === n) break;
      }
    } finally {
      controller.abort();
    }
    return taken;
  }

  it('hands its own appends to a subscriber without reading them back, exactly as stored', async () => {
    const s = stream();
    const reads: number[] = [];
    const readForward = mine.readForward.bind(mine);
    const spy = jest.spyOn(mine, 'readForward').mockImplementation((of, from, max) => {
      if (of === s) reads.push(from);
      return readForward(of, from, max);
    });
    try {
      // Upper-case ids come back as PostgreSQL stores them.
      const first = events(2, 'first').map((e) => ({ ...e, id: e.id.toUpperCase() }));
      await mine.append(s, first, 'no_stream');
      const taken = follow(s, 5, async (event) => {
        if (event.revision === 1) await mine.append(s, events(3, 'live'), 1);
      });
      const got = await taken;
      expect(reads).toEqual([]);
      expect(got).toEqual(await theirs.readForward(s, 0, 10));
      expect(got[0]!.id).toBe(first[0]!.id.toLowerCase());
    } finally {
      spy.mockRestore();
    }
  }, 20_000);

  it('gives the same events as the table when another process appends between its own', async () => {
    const s = stream();
    // The first append is stored before the subscriber starts: were it still in flight, the subscriber could take
    // its events before `head` names them, and no append would follow.
    let head = (await mine.append(s, events(2, 'mine'), 'no_stream')).nextRevision;
    const order: Array<[PostgresEventStore, number]> = [
      [theirs, 1],
      [mine, 3],
      [mine, 1],
      [theirs, 2],
      [mine, 2],
    ];
    const total = order.reduce((sum, [, n]) => sum + n, head + 1);
    const taken = follow(s, total, async (event) => {
      // Each append after the subscriber has taken the one before: the next comes live, whoever wrote it.
      while (head === event.revision && order.length > 0) {
        const [store, n] = order.shift()!;
        head = (await store.append(s, events(n, store === mine ? 'mine' : 'theirs'), head)).nextRevision;
      }
    });
    const got = await taken;
    expect(got.map((e) => e.revision)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(got).toEqual(await theirs.readForward(s, 0, 100));
  }, 20_000);

  it('wakes for an append made while its consumer still holds the last event it was given', async () => {
    // A third process whose notifications the test hears after the store has: an append's wake, from it or from
    // the other process, then surely comes while the consumer holds the event.
    const database = await openDatabase({ url: db.url, dataDir: tempDir('es-live-held') });
    const heard = new Set<string>();
    const hearing: Array<() => void> = [];
    const listen = database.listen.bind(database);
    database.listen = (channel, onPayload, onListening) =>
      listen(
        channel,
        (payload) => {
          onPayload(payload);
          heard.add(payload);
          for (const wake of hearing.splice(0)) wake();
        },
        onListening,
      );
    const heardOf = async (payload: string) => {
      while (!heard.has(payload)) await new Promise<void>((resolve) => hearing.push(resolve));
    };
    const held = await new PostgresEventStore(database, 'es', NO_FALLBACK_MS).init();
    try {
      for (const writer of [held, theirs]) {
        const s = stream();
        await writer.append(s, events(1, 'before'), 'no_stream');
        const got = await follow(
          s,
          2,
          async (event) => {
            if (event.revision !== 0) return;
            await writer.append(s, events(1, 'while held'), 0);
            await heardOf(`${s}:1`);
          },
          held,
        );
        expect(got.map((e) => JSON.parse(e.data).tag)).toEqual(['before', 'while held']);
      }
    } finally {
      await held.close();
      await database.close();
    }
  }, 20_000);
});
