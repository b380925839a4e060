import type { StoredEvent } from '@svc/ledger';
import type { Projection } from '@svc/projections';
import { TRAIL_BATCHES, Trail, type TrailProjector } from '../../projections/src/trail';

const SIZE = 10;
const member: Projection = { name: 'member', canHandle: '*', migrations: [], apply: async () => undefined };

/** Batches of `per` events, numbered on from `from`. */
function batchesFrom(from: number, count: number, per: number): StoredEvent[][] {
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: per }, (_, i) => ({ id: `e${from + b * per + i}`, stream: 'ledger', revision: from + b * per + i, type: 'T', data: '{}' })),
  );
}

/** A projector whose first applied batch is held until the test releases it; the others pass. */
function heldProjector() {
  const applied: number[][] = [];
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const projector: TrailProjector = {
    async applyLive(batch) {
      applied.push(batch.map((e) => e.revision));
      if (applied.length === 1) {
        reach();
        await released;
      }
    },
    recover: async () => undefined,
  };
  return { projector, applied, reached, release };
}

/** Whether `promise` has settled once everything already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('the trail of read models behind the leading ones', () => {
  it('holds the leading ones back once it is the set number of batches behind, and joins what queued', async () => {
    const { projector, applied, reached, release } = heldProjector();
    const trail = new Trail(projector, [member], 0, SIZE, new AbortController().signal, () => undefined);
    const [inFlight, ...rest] = batchesFrom(0, 2 + (TRAIL_BATCHES * SIZE) / 2, 2);
    await trail.push(inFlight!);
    await reached;
    // Up to TRAIL_BATCHES batches' worth of events may queue behind the one held...
    for (const batch of rest.slice(0, -1)) expect(await settled(trail.push(batch))).toBe(true);
    // ...and the next waits until the trail moves.
    const over = trail.push(rest[rest.length - 1]!);
    expect(await settled(over)).toBe(false);
    release();
    await over;
    // What queued meanwhile goes in transactions of up to the batch size, in order.
    expect(applied[1]).toEqual(Array.from({ length: SIZE }, (_, i) => 2 + i));
    await trail.stop();
    expect(applied.flat()).toEqual(applied.flat().slice().sort((a, b) => a - b));
  });

  it('tells the projector of a batch none of its members could apply, and goes on with the next', async () => {
    const recovered: unknown[] = [];
    let after = 0;
    const applied: number[] = [];
    const projector: TrailProjector = {
      async applyLive(batch) {
        if (batch[0]!.revision === 0) throw new Error('database away');
        applied.push(...batch.map((e) => e.revision));
      },
      recover: async (error) => void recovered.push(error),
    };
    const trail = new Trail(projector, [member], 0, SIZE, new AbortController().signal, () => (after += 1));
    for (const batch of batchesFrom(0, 2, 3)) await trail.push(batch);
    await trail.stop();
    expect(recovered).toEqual([new Error('database away')]);
    expect(applied).toEqual([3, 4, 5]);
    expect(after).toBe(2);
    expect(trail.carries(member, 5)).toBe(true);
    expect(trail.carries(member, 2)).toBe(false);
  });
});
