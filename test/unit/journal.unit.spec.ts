import { Journal, JournaledMap } from '@svc/ledger';

describe('the decision-state journal', () => {
  it('rolls back every write of a batch, in reverse order', () => {
    const journal = new Journal();
    const map = new JournaledMap<string, number>(journal, [['a', 1]]);
    journal.begin();
    map.set('a', 2);
    map.set('b', 3);
    map.set('a', 4);
    map.delete('a');
    journal.rollback();
    expect([...map.entries()]).toEqual([['a', 1]]);
  });

  it('keeps committed writes', () => {
    const journal = new Journal();
    const map = new JournaledMap<string, number>(journal);
    journal.begin();
    map.set('a', 1);
    journal.commit();
    journal.begin();
    map.set('a', 2);
    journal.rollback();
    expect(map.get('a')).toBe(1);
  });
});
