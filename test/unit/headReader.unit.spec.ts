import { HeadReader } from '@svc/ledger';

/** A store whose head reads answer when the test says, each with the head as of the moment it started. */
function store() {
  const reads: Array<{ asOf: number; answer(): void; fail(): void }> = [];
  const s = {
    committed: 0,
    reads,
    read: () =>
      new Promise<number>((resolve, reject) => {
        const asOf = s.committed;
        reads.push({ asOf, answer: () => resolve(asOf), fail: () => reject(new Error('store down')) });
      }),
  };
  return s;
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('the shared ledger head read', () => {
  it('never answers a caller from a read that started before it asked', async () => {
    const s = store();
    const heads = new HeadReader(s.read);
    const a = heads.head();
    s.committed = 7; // a write commits, then its client reads
    const b = heads.head();
    s.reads[0]!.answer();
    expect(await a).toBe(0);
    await settled();
    expect(s.reads).toHaveLength(2);
    s.reads[1]!.answer();
    expect(await b).toBe(7);
  });

  it('serves every caller that arrives during a read with one more read', async () => {
    const s = store();
    const heads = new HeadReader(s.read);
    const first = heads.head();
    const waiting = Array.from({ length: 50 }, () => heads.head());
    s.reads[0]!.answer();
    await first;
    await settled();
    s.reads[1]!.answer();
    await Promise.all(waiting);
    expect(s.reads).toHaveLength(2);
    // Once idle, the next caller starts a read of its own at once.
    const later = heads.head();
    expect(s.reads).toHaveLength(3);
    s.reads[2]!.answer();
    await later;
  });

  it('passes a failed read to its callers only; those waiting get the next read', async () => {
    const s = store();
    const heads = new HeadReader(s.read);
    const a = heads.head();
    const b = heads.head();
    s.reads[0]!.fail();
    await expect(a).rejects.toThrow('store down');
    await settled();
    s.reads[1]!.answer();
    expect(await b).toBe(0);
  });
});
