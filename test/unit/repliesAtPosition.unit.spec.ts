import { RepliesAtPosition } from '../../apps/api/src/routes/society/atPosition';

describe('replies kept per read-model position', () => {
  let computed = 0;
  const compute = (value: string) => () => {
    computed += 1;
    return Promise.resolve(value);
  };
  beforeEach(() => {
    computed = 0;
  });

  it('answers the same question at the same position once, concurrent callers included', async () => {
    const replies = new RepliesAtPosition<string>();
    const answers = await Promise.all([replies.get(7, 'q', compute('a')), replies.get(7, 'q', compute('b')), replies.get(7, 'q', compute('c'))]);
    expect(answers).toEqual(['a', 'a', 'a']);
    expect(await replies.get(7, 'q', compute('d'))).toBe('a');
    expect(computed).toBe(1);
    expect(await replies.get(7, 'other', compute('e'))).toBe('e');
    expect(computed).toBe(2);
  });

  it('asks again once the read models move, and keeps nothing from before', async () => {
    const replies = new RepliesAtPosition<string>();
    await replies.get(7, 'q', compute('a'));
    await replies.get(7, 'other', compute('b'));
    expect(await replies.get(8, 'q', compute('c'))).toBe('c');
    expect(replies.size).toBe(1);
    expect(await replies.get(8, 'other', compute('d'))).toBe('d');
    expect(computed).toBe(4);
  });

  it('keeps no failure: the next caller asks the database again', async () => {
    const replies = new RepliesAtPosition<string>();
    await expect(replies.get(7, 'q', () => Promise.reject(new Error('database away')))).rejects.toThrow('database away');
    expect(await replies.get(7, 'q', compute('a'))).toBe('a');
  });

  it('holds a bounded number of replies, dropping the least recently asked', async () => {
    const replies = new RepliesAtPosition<string>();
    await replies.get(1, 'hot', compute('hot'));
    for (let i = 0; i < 300; i++) {
      await replies.get(1, `q${i}`, compute(`q${i}`));
      await replies.get(1, 'hot', compute('again'));
    }
    expect(replies.size).toBe(200);
    expect(await replies.get(1, 'hot', compute('again'))).toBe('hot');
    expect(await replies.get(1, 'q0', compute('recomputed'))).toBe('recomputed');
  });
});
