import type { RunningServer } from '../../scripts/embedded';
import { registerCitizen } from '../support/citizens';
import { call, type Reply } from '../support/http';
import { LIMIT_BYTES, memoryNotes } from '../support/memoryNotes';
import { embeddedService, type EmbeddedService } from '../support/servers';

interface Citizen {
  id: string;
  handle: string;
  key: string;
}

interface Note {
  key: string;
  value: string;
  updated_at: number;
}

describe('memory notes, over HTTP against PostgreSQL and Redis', () => {
  let service: EmbeddedService;
  let server: RunningServer;
  let base: string;

  beforeAll(async () => {
    service = await embeddedService('memory');
    ({ server } = service);
    base = server.url;
  }, 60_000);
  afterAll(() => service?.close());

  const citizen = (prefix = 'm'): Promise<Citizen> => registerCitizen(base, prefix);
  const { setNote, getNote, listNotes, deleteNote } = memoryNotes(() => base);

  function expectError(res: Reply, status: number, code: string, field?: string): void {
    expect([res.status, res.body]).toEqual([
      status,
      { ok: false, error: expect.objectContaining({ code, message: expect.any(String), ...(field === undefined ? {} : { field }) }) },
    ]);
  }

  it('stores a note, reads it back by key, and lists every note sorted by key in code-unit order', async () => {
    const me = await citizen();
    const before = Date.now();
    const created = await setNote(me.key, { key: 'plan', value: 'buy low' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ ok: true, key: 'plan', bytes: 7, created: true, updated_at: expect.any(Number) });
    expect(created.body.updated_at).toBeGreaterThanOrEqual(before);
    expect(created.body.updated_at).toBeLessThanOrEqual(Date.now());

    const one = await getNote(me.key, 'plan');
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ok: true, note: { key: 'plan', value: 'buy low', updated_at: created.body.updated_at } });

    // Stored out of order; '-' < '.' < digits < '_' < letters in code units, which a locale sort would not give.
    for (const name of ['b', 'a_1', 'a1', 'a.1', 'a-1', 'a']) {
      expect((await setNote(me.key, { key: name, value: `value of ${name}` })).body.created).toBe(true);
    }
    const all = await listNotes(me.key);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['notes', 'ok']);
    expect(all.body.notes.map((n: Note) => n.key)).toEqual(['a', 'a-1', 'a.1', 'a1', 'a_1', 'b', 'plan']);
    for (const note of all.body.notes as Note[]) {
      expect(note).toEqual({ key: note.key, value: note.key === 'plan' ? 'buy low' : `value of ${note.key}`, updated_at: expect.any(Number) });
    }
  });

  it('replaces the value when the same key is set again, keeping one note', async () => {
    const me = await citizen();
    const first = await setNote(me.key, { key: 'mood', value: 'bullish' });
    const second = await setNote(me.key, { key: 'mood', value: 'bearish, très' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ok: true, key: 'mood', bytes: 14, created: false, updated_at: expect.any(Number) });
    expect(second.body.updated_at).toBeGreaterThanOrEqual(first.body.updated_at);
    expect((await getNote(me.key, 'mood')).body.note).toEqual({ key: 'mood', value: 'bearish, très', updated_at: second.body.updated_at });
    expect((await listNotes(me.key)).body.notes).toEqual([{ key: 'mood', value: 'bearish, très', updated_at: second.body.updated_at }]);
  });

  it('deletes a note for good: then it is 404 by key, gone from the list, and a second delete is 404', async () => {
    const me = await citizen();
    await setNote(me.key, { key: 'keep', value: 'stays' });
    await setNote(me.key, { key: 'drop', value: 'goes' });
    const gone = await deleteNote(me.key, 'drop');
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ ok: true, key: 'drop', deleted: true });
    expectError(await getNote(me.key, 'drop'), 404, 'not_found');
    expect((await listNotes(me.key)).body.notes.map((n: Note) => n.key)).toEqual(['keep']);
    expectError(await deleteNote(me.key, 'drop'), 404, 'not_found');
    expect((await getNote(me.key, 'keep')).body.note.value).toBe('stays');
    expect(await server.services.database.db.selectFrom('vault.memory_notes').select('id').where('agent_id', '=', me.id).execute()).toHaveLength(1);

    const fresh = await citizen();
    expectError(await deleteNote(fresh.key, 'drop'), 404, 'not_found');
    expectError(await getNote(fresh.key, 'drop'), 404, 'not_found');
    expect((await listNotes(fresh.key)).body).toEqual({ ok: true, notes: [] });
    // Set again after a delete: a new note, not a resurrection of the old one.
    expect((await setNote(me.key, { key: 'drop', value: 'back' })).body.created).toBe(true);
    expect((await getNote(me.key, 'drop')).body.note.value).toBe('back');
  });

  it('accepts a key of 1 to 64 characters of a-z 0-9 _ . -', async () => {
    const me = await citizen();
    for (const name of ['x', 'a'.repeat(64), 'abc-xyz_0.9', '...', '-_-']) {
      const res = await setNote(me.key, { key: name, value: name });
      expect([name, res.status]).toEqual([name, 200]);
      expect((await getNote(me.key, name)).body.note.value).toBe(name);
    }
  });

  it.each([
    ['65 characters', 'a'.repeat(65)],
    ['upper case', 'Plan'],
    ['a space', 'my plan'],
    ['a slash', 'a/b'],
    ['no characters', ''],
    ['non-ASCII', 'plán'],
    ['a colon', 'a:b'],
  ])('refuses a key with %s: 400 invalid_request naming key, on set, get and delete', async (_label, name) => {
    const me = await citizen();
    expectError(await setNote(me.key, { key: name, value: 'v' }), 400, 'invalid_request', 'key');
    expectError(await getNote(me.key, name), 400, 'invalid_request', 'key');
    expectError(await deleteNote(me.key, name), 400, 'invalid_request', 'key');
    expect((await listNotes(me.key)).body.notes).toEqual([]);
  });

  it('refuses a missing or non-string key, and a delete without one', async () => {
    const me = await citizen();
    for (const body of [{ value: 'v' }, { key: 7, value: 'v' }, { key: null, value: 'v' }, { key: ['a'], value: 'v' }]) {
      expectError(await setNote(me.key, body), 400, 'invalid_request', 'key');
    }
    expectError(await call(base, 'DELETE', '/api/v1/memory', { key: me.key }), 400, 'invalid_request', 'key');
    expectError(await call(base, 'GET', '/api/v1/memory?key=a&key=b', { key: me.key }), 400, 'invalid_request', 'key');
    expect((await listNotes(me.key)).body.notes).toEqual([]);
  });

  it('limits the value to 16384 bytes of UTF-8, however many characters that is', async () => {
    const me = await citizen();
    const cases: Array<[string, string, boolean]> = [
      ['ascii-at', 'a'.repeat(LIMIT_BYTES), true],
      ['ascii-over', 'a'.repeat(LIMIT_BYTES + 1), false],
      // é is 2 bytes: 8192 of them are 16384 bytes in 8192 characters.
      ['e-acute-at', 'é'.repeat(LIMIT_BYTES / 2), true],
      ['e-acute-over', `${'é'.repeat(LIMIT_BYTES / 2)}a`, false],
      ['e-acute-far-over', 'é'.repeat(LIMIT_BYTES / 2 + 1), false],
      // An emoji is 4 bytes and 2 UTF-16 units: 4096 of them are 16384 bytes.
      ['emoji-at', '🚀'.repeat(LIMIT_BYTES / 4), true],
      ['emoji-over', `${'🚀'.repeat(LIMIT_BYTES / 4)}a`, false],
      ['emoji-far-over', '🚀'.repeat(LIMIT_BYTES / 4 + 1), false],
      ['euro-at', `${'€'.repeat(5461)}a`, true],
      ['euro-over', '€'.repeat(5462), false],
      ['empty', '', true],
    ];
    for (const [name, value, accepted] of cases) {
      const bytes = Buffer.byteLength(value, 'utf8');
      const res = await setNote(me.key, { key: name, value });
      if (accepted) {
        expect([name, res.status, res.body.bytes]).toEqual([name, 200, bytes]);
        const back = await getNote(me.key, name);
        expect([name, back.body.note.value === value]).toEqual([name, true]);
      } else {
        expect([name, bytes > LIMIT_BYTES]).toEqual([name, true]);
        expectError(res, 400, 'invalid_request', 'value');
        expect(res.body.error.message).toContain(String(LIMIT_BYTES));
        expectError(await getNote(me.key, name), 404, 'not_found');
      }
    }
    expect((await listNotes(me.key)).body.notes.map((n: Note) => n.key)).toEqual(['ascii-at', 'e-acute-at', 'emoji-at', 'empty', 'euro-at']);
  });

  it('keeps an existing note when a replacement is too large', async () => {
    const me = await citizen();
    await setNote(me.key, { key: 'big', value: 'small' });
    expectError(await setNote(me.key, { key: 'big', value: '🚀'.repeat(LIMIT_BYTES / 4 + 1) }), 400, 'invalid_request', 'value');
    expect((await getNote(me.key, 'big')).body.note.value).toBe('small');
  });

  it('refuses a value that is not a string, is missing, or cannot be stored as UTF-8', async () => {
    const me = await citizen();
    for (const value of [42, true, null, { text: 'x' }, ['x']]) {
      expectError(await setNote(me.key, { key: 'typed', value }), 400, 'invalid_request', 'value');
    }
    expectError(await setNote(me.key, { key: 'typed' }), 400, 'invalid_request', 'value');
    expectError(await setNote(me.key, { key: 'typed', value: 'a\u0000b' }), 400, 'invalid_request', 'value');
    const loneSurrogate = await call(base, 'POST', '/api/v1/memory', { key: me.key, raw: '{"key":"typed","value":"a\\ud800b"}', headers: { 'content-type': 'application/json' } });
    expectError(loneSurrogate, 400, 'invalid_request', 'value');
    expect((await listNotes(me.key)).body.notes).toEqual([]);
  });

  it("shows a citizen's notes to that citizen only, and answers 401 without a valid key", async () => {
    const owner = await citizen('own');
    const other = await citizen('oth');
    await setNote(owner.key, { key: 'private', value: 'owner only' });
    await setNote(other.key, { key: 'mine', value: 'other only' });

    expect((await listNotes(other.key)).body.notes).toEqual([{ key: 'mine', value: 'other only', updated_at: expect.any(Number) }]);
    expectError(await getNote(other.key, 'private'), 404, 'not_found');
    expectError(await deleteNote(other.key, 'private'), 404, 'not_found');
    // The same name under another citizen is another note.
    expect((await setNote(other.key, { key: 'private', value: 'not yours' })).body.created).toBe(true);
    expect((await getNote(owner.key, 'private')).body.note.value).toBe('owner only');
    expect((await getNote(other.key, 'private')).body.note.value).toBe('not yours');
    expect((await listNotes(owner.key)).body.notes.map((n: Note) => n.value)).toEqual(['owner only']);

    const forged = `${owner.key.slice(0, owner.key.lastIndexOf('_') + 1)}${'2'.repeat(44)}`;
    for (const key of [undefined, 'svc_sk_unknown', forged]) {
      expectError(await listNotes(key), 401, 'unauthorized');
      expectError(await getNote(key, 'private'), 401, 'unauthorized');
      expectError(await setNote(key, { key: 'private', value: 'overwritten' }), 401, 'unauthorized');
      expectError(await deleteNote(key, 'private'), 401, 'unauthorized');
    }
    const viaHeader = await call(base, 'GET', '/api/v1/memory?key=private', { headers: { 'x-api-key': owner.key } });
    expect(viaHeader.body.note.value).toBe('owner only');
    expect((await getNote(owner.key, 'private')).body.note.value).toBe('owner only');
  });

  it('carries every note over POST /api/v1/rotate: the new key reads them all, the old key is 401', async () => {
    const me = await citizen('rot');
    const values: Record<string, string> = { alpha: 'first', beta: 'é🚀 mixed', gamma: 'x'.repeat(LIMIT_BYTES) };
    for (const [key, value] of Object.entries(values)) expect((await setNote(me.key, { key, value })).status).toBe(200);
    const before = (await listNotes(me.key)).body.notes;
    expect(before).toHaveLength(3);

    const rotated = await call(base, 'POST', '/api/v1/rotate', { key: me.key, body: {} });
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.api_key;
    expect(newKey).not.toBe(me.key);

    expect((await listNotes(newKey)).body.notes).toEqual(before);
    for (const [key, value] of Object.entries(values)) expect((await getNote(newKey, key)).body.note.value).toBe(value);
    expectError(await listNotes(me.key), 401, 'unauthorized');
    expectError(await getNote(me.key, 'alpha'), 401, 'unauthorized');
    expectError(await setNote(me.key, { key: 'alpha', value: 'stale key' }), 401, 'unauthorized');
    expectError(await deleteNote(me.key, 'alpha'), 401, 'unauthorized');
    expect((await getNote(newKey, 'alpha')).body.note.value).toBe('first');

    expect((await setNote(newKey, { key: 'delta', value: 'after rotation' })).body.created).toBe(true);
    expect((await setNote(newKey, { key: 'alpha', value: 'replaced after rotation' })).body.created).toBe(false);
    expect((await getNote(newKey, 'delta')).body.note.value).toBe('after rotation');

    // A second rotation re-wraps again: notes from before and after the first both follow.
    const again = (await call(base, 'POST', '/api/v1/rotate', { key: newKey, body: {} })).body.api_key as string;
    const after = (await listNotes(again)).body.notes as Note[];
    expect(after.map((n) => [n.key, n.value])).toEqual([
      ['alpha', 'replaced after rotation'],
      ['beta', values.beta],
      ['delta', 'after rotation'],
      ['gamma', values.gamma],
    ]);
    expectError(await listNotes(newKey), 401, 'unauthorized');
  });

  it('rotates a key of a citizen without notes, and notes set afterwards are read with the new key', async () => {
    const me = await citizen('rot');
    const newKey = (await call(base, 'POST', '/api/v1/rotate', { key: me.key, body: {} })).body.api_key as string;
    expect((await listNotes(newKey)).body).toEqual({ ok: true, notes: [] });
    expect((await setNote(newKey, { key: 'later', value: 'written after' })).status).toBe(200);
    const third = (await call(base, 'POST', '/api/v1/rotate', { key: newKey, body: {} })).body.api_key as string;
    expect((await getNote(third, 'later')).body.note.value).toBe('written after');
  });
});
