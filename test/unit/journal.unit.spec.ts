import { ColdKey, Journal, JournaledMap } from '@svc/ledger';

describe('the decision-state journal', () => {
  it('rolls back every write of a batch, in reverse order', () => {
    const journal = new Journal();
    const map = new JournaledMap<string, number>(journal, 'm', [['a', 1]]);
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
    const map = new JournaledMap<string, number>(journal, 'm');
    journal.begin();
    map.set('a', 1);
    journal.commit();
    journal.begin();
    map.set('a', 2);
    journal.rollback();
    expect(map.get('a')).toBe(1);
  });
});

describe('a tiered decision-state map', () => {
  function tiered() {
    const journal = new Journal();
    const map = new JournaledMap<string, number>(journal, 'm');
    journal.tiered = true;
    return { journal, map };
  }

  it('refuses to guess a key it does not hold: outside a probing pass the read throws, inside it is noted', () => {
    const { journal, map } = tiered();
    expect(() => map.get('a')).toThrow(ColdKey);
    const pass = journal.probing(() => [map.get('a'), map.has('b')]);
    expect(pass.result).toEqual([undefined, false]);
    expect(pass.cold).toEqual([{ map: 'm', key: 'a' }, { map: 'm', key: 'b' }]);
    map.fill('a', 1);
    map.fill('b', undefined);
    expect(journal.probing(() => [map.get('a'), map.has('b')])).toEqual({ result: [1, false], cold: [] });
  });

  it('reports what a batch wrote, and a write undone to a cold key leaves it cold, not absent', () => {
    const { journal, map } = tiered();
    map.fill('kept', 1);
    journal.begin();
    map.set('kept', 2);
    const mark = journal.mark();
    map.set('cold', 3);
    expect(journal.writes()).toEqual([
      { map: 'm', key: 'kept', value: 2 },
      { map: 'm', key: 'cold', value: 3 },
    ]);
    journal.rollbackTo(mark);
    expect(journal.writes()).toEqual([{ map: 'm', key: 'kept', value: 2 }]);
    expect(() => map.get('cold')).toThrow(ColdKey);
    journal.rollback();
    expect(map.get('kept')).toBe(1);
    expect(journal.writes()).toEqual([]);
  });

  it('evicts the least recently used keys first', () => {
    const { journal, map } = tiered();
    for (const key of ['a', 'b', 'c', 'd']) map.fill(key, 0);
    map.get('a');
    journal.evict(2);
    expect(map.size).toBe(2);
    expect(map.get('a')).toBe(0);
    expect(map.get('d')).toBe(0);
    expect(() => map.get('b')).toThrow(ColdKey);
  });
});
