import { randomBytes } from 'node:crypto';
import { bodyValidator, deleteNoteQuery, getNotesQuery, queryValidator, setNoteBody } from '@svc/contracts';
import { keyEncryptionKey, newApiKey, newDataKey, noteKeyId, openNote, sealNote, unwrapDataKey, wrapDataKey } from '@svc/vault';

const AGENT = 'agent_01JMEMORYUNIT000000000000A';
const OTHER_AGENT = 'agent_01JMEMORYUNIT000000000000B';

describe('the memory data key, wrapped under the API key', () => {
  it('unwraps with the key it was wrapped with, and with no other key', () => {
    const dataKey = newDataKey();
    const apiKey = newApiKey();
    const stored = wrapDataKey(dataKey, apiKey, AGENT);
    expect(unwrapDataKey(stored, apiKey, AGENT).equals(dataKey)).toBe(true);
    expect(() => unwrapDataKey(stored, newApiKey(), AGENT)).toThrow();
    // One character off is another key entirely.
    const oneOff = apiKey.slice(0, -1) + (apiKey.endsWith('a') ? 'b' : 'a');
    expect(() => unwrapDataKey(stored, oneOff, AGENT)).toThrow();
  });

  it('is bound to its citizen: the same wrapped row does not open for another agent id', () => {
    const apiKey = newApiKey();
    const stored = wrapDataKey(newDataKey(), apiKey, AGENT);
    expect(() => unwrapDataKey(stored, apiKey, OTHER_AGENT)).toThrow();
  });

  it('needs the salt stored beside it, and never stores the data key or the API key in the clear', () => {
    const dataKey = newDataKey();
    const apiKey = newApiKey();
    const stored = wrapDataKey(dataKey, apiKey, AGENT);
    expect(Buffer.from(stored.salt, 'base64')).toHaveLength(16);
    expect(() => unwrapDataKey({ ...stored, salt: randomBytes(16).toString('base64') }, apiKey, AGENT)).toThrow();
    const text = JSON.stringify(stored);
    for (const encoding of ['hex', 'base64', 'base64url'] as const) expect(text).not.toContain(dataKey.toString(encoding));
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(apiKey.split('_').pop());
  });

  it('wraps afresh each time (a new salt), so a rotation leaves nothing in common with the old row', () => {
    const dataKey = newDataKey();
    const apiKey = newApiKey();
    const a = wrapDataKey(dataKey, apiKey, AGENT);
    const b = wrapDataKey(dataKey, apiKey, AGENT);
    expect(a.salt).not.toBe(b.salt);
    expect(a.wrapped).not.toBe(b.wrapped);
  });

  it('derives the key-encryption key by HKDF-SHA256 from the full API key and the salt', () => {
    const salt = randomBytes(16);
    const apiKey = newApiKey();
    expect(keyEncryptionKey(apiKey, salt)).toHaveLength(32);
    expect(keyEncryptionKey(apiKey, salt).equals(keyEncryptionKey(apiKey, salt))).toBe(true);
    expect(keyEncryptionKey(apiKey, randomBytes(16)).equals(keyEncryptionKey(apiKey, salt))).toBe(false);
    // The key id alone (the non-secret part) does not give the same key.
    expect(keyEncryptionKey(apiKey.split('_').slice(0, 3).join('_'), salt).equals(keyEncryptionKey(apiKey, salt))).toBe(false);
  });
});

describe('sealed notes', () => {
  const dataKey = newDataKey();

  it('open with their data key, agent and note id, and hold neither name nor value in the clear', () => {
    const sealed = sealNote(dataKey, AGENT, 'note_A', 'plans.q3', 'buy the dip, sell the rip ✓');
    expect(openNote(dataKey, AGENT, 'note_A', sealed)).toEqual({ key: 'plans.q3', value: 'buy the dip, sell the rip ✓' });
    const text = JSON.stringify(sealed);
    expect(text).not.toContain('plans.q3');
    expect(text).not.toContain('buy the dip');
  });

  it('refuse to open under another data key, another citizen, another note id, or with name and value swapped', () => {
    const sealed = sealNote(dataKey, AGENT, 'note_A', 'k', 'v');
    expect(() => openNote(newDataKey(), AGENT, 'note_A', sealed)).toThrow();
    expect(() => openNote(dataKey, OTHER_AGENT, 'note_A', sealed)).toThrow();
    expect(() => openNote(dataKey, AGENT, 'note_B', sealed)).toThrow();
    expect(() => openNote(dataKey, AGENT, 'note_A', { sealedKey: sealed.sealedValue, sealedValue: sealed.sealedKey })).toThrow();
  });

  it('are found by a keyed hash of the name: the same under one data key, unrelated under another', () => {
    expect(noteKeyId(dataKey, 'k')).toMatch(/^[0-9a-f]{64}$/);
    expect(noteKeyId(dataKey, 'k')).toBe(noteKeyId(dataKey, 'k'));
    expect(noteKeyId(dataKey, 'k')).not.toBe(noteKeyId(dataKey, 'k2'));
    expect(noteKeyId(newDataKey(), 'k')).not.toBe(noteKeyId(dataKey, 'k'));
  });
});

describe('memory request schemas', () => {
  const setNote = bodyValidator(setNoteBody);
  const getNotes = queryValidator(getNotesQuery);
  const deleteNote = queryValidator(deleteNoteQuery);

  it.each(['a', 'x'.repeat(64), 'plans.q3', 'a_b-c.d', '0', '...', '-'])('accepts the key %j', (key) => {
    expect(setNote({ key, value: '' })).toBeNull();
    expect(getNotes({ key })).toBeNull();
    expect(deleteNote({ key })).toBeNull();
  });

  it.each(['', 'x'.repeat(65), 'Plans', 'a b', 'a/b', 'é', 'a\u00a0', 'ключ', 'a:b', 'a*', 'a\n'])('refuses the key %j, naming it', (key) => {
    expect(setNote({ key, value: 'v' })).toMatchObject({ field: 'key' });
    expect(getNotes({ key })).toMatchObject({ field: 'key' });
    expect(deleteNote({ key })).toMatchObject({ field: 'key' });
  });

  it('needs key and a string value', () => {
    expect(setNote({ value: 'v' })).toEqual({ field: 'key', message: 'key is required' });
    expect(setNote({ key: 'k' })).toEqual({ field: 'value', message: 'value is required' });
    expect(setNote({ key: 'k', value: 7 })).toMatchObject({ field: 'value' });
    expect(setNote({ key: 'k', value: { a: 1 } })).toMatchObject({ field: 'value' });
    expect(deleteNote({})).toEqual({ field: 'key', message: 'key is required' });
    expect(getNotes({})).toBeNull();
  });
});
