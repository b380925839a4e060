import type { EventStore } from '@svc/ledger';

export type CountingStore = EventStore & { appends: number; reads: number[] };

/** `store`, counting its appends (the writer's round trips) and the revisions it is read from. */
export function countingStore(store: EventStore): CountingStore {
  const counted = Object.create(store) as CountingStore;
  counted.appends = 0;
  counted.reads = [];
  counted.append = async (...args) => {
    counted.appends += 1;
    return store.append(...args);
  };
  counted.readForward = async (stream, from, max) => {
    counted.reads.push(from);
    return store.readForward(stream, from, max);
  };
  return counted;
}

export type GatedStore = EventStore & {
  /** Holds the next append until released, before it reaches the store or after it has committed there. */
  holdNextAppend(when: 'before' | 'after'): { reached: Promise<void>; release(): void };
  /** The stored head the next `headRevision` call answers, once it has. */
  nextHeadRead(): Promise<number>;
};

/** `store`, whose appends a test can hold at a point of its choosing, and whose head reads it can wait on. */
export function gatedStore(store: EventStore): GatedStore {
  const gated = Object.create(store) as GatedStore;
  let gate: { when: 'before' | 'after'; reach(): void; opened: Promise<void> } | undefined;
  let headReads: Array<(head: number) => void> = [];
  gated.holdNextAppend = (when) => {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    gate = { when, reach, opened: new Promise<void>((resolve) => (release = resolve)) };
    return { reached, release };
  };
  gated.nextHeadRead = () => new Promise<number>((resolve) => headReads.push(resolve));
  gated.append = async (...args) => {
    const held = gate;
    gate = undefined;
    if (held?.when === 'before') {
      held.reach();
      await held.opened;
    }
    const result = await store.append(...args);
    if (held?.when === 'after') {
      held.reach();
      await held.opened;
    }
    return result;
  };
  gated.headRevision = async (stream) => {
    const head = await store.headRevision(stream);
    const waiting = headReads;
    headReads = [];
    for (const resolve of waiting) resolve(head);
    return head;
  };
  return gated;
}
