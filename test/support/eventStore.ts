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
