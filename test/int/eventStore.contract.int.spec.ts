import { randomUUID } from 'node:crypto';
import { EsdbEventStore, PostgresEventStore, WrongExpectedRevisionError, type EventStore, type NewEvent, type StoredEvent } from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

/** One contract, every adapter: the PostgreSQL store on a server and on PGlite, and EventStoreDB. */
interface Adapter {
  name: string;
  open(): Promise<{ store: EventStore; close(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'postgres (pg)',
    async open() {
      const db: FreshDatabase = await freshDatabase('es_contract');
      const database: SqlDatabase = await openDatabase({ url: db.url, dataDir: tempDir('es') });
      const store = await new PostgresEventStore(database).init();
      return {
        store,
        async close() {
          await store.close();
          await database.close();
          await db.drop();
        },
      };
    },
  },
  {
    name: 'postgres (PGlite)',
    async open() {
      const database = await openDatabase({ dataDir: tempDir('es-pglite') });
      const store = await new PostgresEventStore(database).init();
      return {
        store,
        async close() {
          await store.close();
          await database.close();
        },
      };
    },
  },
];

const esdbUrl = process.env.EVENTSTORE_URL;
if (esdbUrl && /^esdb(\+discover)?:\/\//.test(esdbUrl)) {
  adapters.push({
    name: 'EventStoreDB',
    async open() {
      const store = new EsdbEventStore(esdbUrl);
      return { store, close: () => store.close() };
    },
  });
} else {
  console.log('EventStoreDB contract run skipped: EVENTSTORE_URL is not an esdb:// URL (no EventStoreDB server on this machine)');
}

function events(n: number, tag = 'e'): NewEvent[] {
  return Array.from({ length: n }, (_, i) => ({ id: randomUUID(), type: 'Tested', data: `{"i":${i},"tag":"${tag}","text":"é ✓"}` }));
}

async function take(source: AsyncIterable<StoredEvent>, n: number): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  for await (const event of source) {
    out.push(event);
    if (out.length === n) break;
  }
  return out;
}

describe.each(adapters)('event store contract: $name', (adapter) => {
  let store: EventStore;
  let close: () => Promise<void>;
  const stream = () => `s-${randomUUID()}`;

  beforeAll(async () => {
    ({ store, close } = await adapter.open());
  }, 60_000);
  afterAll(() => close());

  it('appends to a new stream and reads the exact bytes back in order', async () => {
    const s = stream();
    expect(await store.headRevision(s)).toBe(-1);
    const batch = events(3);
    const result = await store.append(s, batch, 'no_stream');
    expect(result).toEqual({ nextRevision: 2, duplicate: false });
    const read = await store.readForward(s, 0, 10);
    expect(read.map((e) => [e.revision, e.id, e.type, e.data])).toEqual(batch.map((e, i) => [i, e.id, e.type, e.data]));
    expect(await store.headRevision(s)).toBe(2);
  });

  it('reports a conflict when the expected revision is stale or ahead', async () => {
    const s = stream();
    await store.append(s, events(2), 'no_stream');
    await expect(store.append(s, events(1), 0)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await expect(store.append(s, events(1), 5)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await expect(store.append(s, events(1), 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect(await store.append(s, events(1), 1)).toMatchObject({ nextRevision: 2 });
  });

  it('reads forward from a position, at most maxCount', async () => {
    const s = stream();
    await store.append(s, events(10), 'no_stream');
    const read = await store.readForward(s, 4, 3);
    expect(read.map((e) => e.revision)).toEqual([4, 5, 6]);
    expect(await store.readForward(s, 10, 5)).toEqual([]);
    expect(await store.readForward(stream(), 0, 5)).toEqual([]);
  });

  it('treats a re-append of the same event ids as done, not as new events', async () => {
    const s = stream();
    const batch = events(2);
    await store.append(s, batch, 'no_stream');
    const again = await store.append(s, batch, 'no_stream');
    expect(again.nextRevision).toBe(1);
    expect(await store.headRevision(s)).toBe(1);
    expect((await store.readForward(s, 0, 10)).map((e) => e.id)).toEqual(batch.map((e) => e.id));
  });

  it('catches up from a checkpoint and then goes on live', async () => {
    const s = stream();
    await store.append(s, events(5, 'old'), 'no_stream');
    const controller = new AbortController();
    const seen = take(store.subscribe(s, 2, controller.signal), 6);
    const live = events(3, 'live');
    await store.append(s, live, 4);
    const got = await seen;
    controller.abort();
    expect(got.map((e) => e.revision)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(got.slice(3).map((e) => e.id)).toEqual(live.map((e) => e.id));
  }, 20_000);

  it('keeps one gapless order under concurrent appenders', async () => {
    const s = stream();
    const writers = 6;
    const perWriter = 15;
    async function writer(w: number): Promise<void> {
      for (let i = 0; i < perWriter; i++) {
        for (;;) {
          const head = await store.headRevision(s);
          try {
            await store.append(s, [{ id: randomUUID(), type: 'Tested', data: JSON.stringify({ w, i }) }], head === -1 ? 'no_stream' : head);
            break;
          } catch (error) {
            if (!(error instanceof WrongExpectedRevisionError)) throw error;
          }
        }
      }
    }
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    const all = await store.readForward(s, 0, 1000);
    expect(all.map((e) => e.revision)).toEqual(Array.from({ length: writers * perWriter }, (_, i) => i));
    for (let w = 0; w < writers; w++) {
      const mine = all.map((e) => JSON.parse(e.data)).filter((d) => d.w === w).map((d) => d.i);
      expect(mine).toEqual(Array.from({ length: perWriter }, (_, i) => i));
    }
  }, 60_000);
});
