import { OwedWrites } from '@svc/readmodel';

/** Errors as node-postgres throws them: the server gone, and a query the server answered with an error. */
const away = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const refused = () => Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });

describe('OwedWrites', () => {
  let owed: OwedWrites;
  beforeEach(() => (owed = new OwedWrites(60_000)));
  afterEach(() => owed.close());

  it('owes a write the database did not answer, and says it again until it is taken', async () => {
    const answers = [away(), away()];
    let said = 0;
    const say = async () => {
      const error = answers.shift();
      if (error) throw error;
      said += 1;
    };
    await expect(owed.sayOrOwe('a', say)).rejects.toThrow('ECONNREFUSED');
    expect(owed.size).toBe(1);
    await owed.pay();
    expect([owed.size, said]).toEqual([1, 0]);
    await owed.pay();
    expect([owed.size, said]).toEqual([0, 1]);
  });

  it('does not owe a write the database answered with an error: saying it again would fail the same way', async () => {
    await expect(owed.sayOrOwe('b', async () => Promise.reject(refused()))).rejects.toThrow('duplicate key');
    expect(owed.size).toBe(0);
  });

  it('drops an owed write the database later refuses, so it does not hold up the ones after it', async () => {
    let first = 0;
    let second = 0;
    await expect(owed.sayOrOwe('first', async () => (first++ === 0 ? Promise.reject(away()) : Promise.reject(refused())))).rejects.toThrow();
    await expect(owed.sayOrOwe('second', async () => (second++ === 0 ? Promise.reject(away()) : undefined))).rejects.toThrow();
    expect(owed.size).toBe(2);
    await owed.pay();
    expect([owed.size, first, second]).toEqual([0, 2, 2]);
  });
});
