import type { EventStore, PostgresStateTier } from '@svc/ledger';

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

/** A point a test holds a call at: `reached` once a call is there, which waits until `release`. */
export interface Gate {
  reached: Promise<void>;
  release(): void;
}

/** Gates armed one at a time: `arm` holds the next call that passes through `pass`. */
function oneShotGate(): { arm(): Gate; pass(): Promise<void> } {
  let held: { reach(): void; opened: Promise<void> } | undefined;
  return {
    arm() {
      let reach!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (reach = resolve));
      held = { reach, opened: new Promise<void>((resolve) => (release = resolve)) };
      return { reached, release };
    },
    async pass() {
      const gate = held;
      held = undefined;
      if (!gate) return;
      gate.reach();
      await gate.opened;
    },
  };
}

export type GatedStore = EventStore & {
  /** Holds the next append until released, before it reaches the store or after it has committed there. */
  holdNextAppend(when: 'before' | 'after'): Gate;
  /** The stored head the next `headRevision` call answers, once it has. */
  nextHeadRead(): Promise<number>;
};

/** `store`, whose appends a test can hold at a point of its choosing, and whose head reads it can wait on. */
export function gatedStore(store: EventStore): GatedStore {
  const gated = Object.create(store) as GatedStore;
  const gate = oneShotGate();
  let at: 'before' | 'after' = 'before';
  let headReads: Array<(head: number) => void> = [];
  gated.holdNextAppend = (when) => {
    at = when;
    return gate.arm();
  };
  gated.nextHeadRead = () => new Promise<number>((resolve) => headReads.push(resolve));
  gated.append = async (...args) => {
    if (at === 'before') await gate.pass();
    const result = await store.append(...args);
    if (at === 'after') await gate.pass();
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

/** `tier` (the writer's cold decision state), whose next load a test can hold until released. */
export function gatedTier(tier: PostgresStateTier): PostgresStateTier & { holdNextLoad(): Gate } {
  const gated = Object.create(tier) as PostgresStateTier & { holdNextLoad(): Gate };
  const gate = oneShotGate();
  gated.holdNextLoad = () => gate.arm();
  gated.load = async (keys) => {
    await gate.pass();
    return tier.load(keys);
  };
  return gated;
}
