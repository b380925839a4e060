import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { hashApiKey, newApiKey, newDataKey, unseal, Vault, wrapDataKey, type MemoryStore } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { until } from '../support/until';
import { vaultCitizen } from '../support/vaultCitizens';

jest.setTimeout(30_000);

const LIMIT = 1000;

describe('memory notes in the vault, against PostgreSQL', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let vault: Vault;
  let memory: MemoryStore;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    db = await freshDatabase('memory');
    database = await openDatabase({ url: db.url, dataDir: tempDir('memory'), poolSize: 12 });
    vault = await new Vault(database, masterKey).init();
    memory = vault.memory;
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const citizen = () => vaultCitizen(vault);

  const noteRows = async (agentId: string) =>
    (await database.db.selectFrom('vault.memory_notes').selectAll().where('agent_id', '=', agentId).execute()) as Array<Record<string, string>>;

  it('stores, replaces, reads and deletes, and refuses every operation with a key that is not the citizen’s', async () => {
    const { agentId, apiKey } = await citizen();
    expect(await memory.set({ agentId, apiKey, key: 'b', value: 'two', limit: LIMIT })).toMatchObject({ ok: true, created: true });
    expect(await memory.set({ agentId, apiKey, key: 'a', value: 'one', limit: LIMIT })).toMatchObject({ ok: true, created: true });
    expect(await memory.set({ agentId, apiKey, key: 'b', value: 'TWO', limit: LIMIT })).toMatchObject({ ok: true, created: false });
    const listed = await memory.list(agentId, apiKey);
    expect(listed.ok && listed.notes.map((n) => [n.key, n.value])).toEqual([
      ['a', 'one'],
      ['b', 'TWO'],
    ]);
    expect(await memory.get(agentId, apiKey, 'b')).toMatchObject({ ok: true, note: { key: 'b', value: 'TWO' } });
    expect(await memory.get(agentId, apiKey, 'c')).toEqual({ ok: true, note: undefined });

    const stranger = newApiKey();
    const denied = { ok: false, reason: 'unauthorized' };
    expect(await memory.set({ agentId, apiKey: stranger, key: 'a', value: 'x', limit: LIMIT })).toEqual(denied);
    expect(await memory.get(agentId, stranger, 'a')).toEqual(denied);
    expect(await memory.list(agentId, stranger)).toEqual(denied);
    expect(await memory.delete(agentId, stranger, 'a')).toEqual(denied);

    expect(await memory.delete(agentId, apiKey, 'a')).toEqual({ ok: true, deleted: true });
    expect(await memory.delete(agentId, apiKey, 'a')).toEqual({ ok: true, deleted: false });
    expect(await noteRows(agentId)).toHaveLength(1);
  });

  it('holds the per-citizen limit: a new key beyond it is refused, replacing and deleting still work', async () => {
    const { agentId, apiKey } = await citizen();
    for (const key of ['n1', 'n2', 'n3']) expect((await memory.set({ agentId, apiKey, key, value: key, limit: 3 })).ok).toBe(true);
    expect(await memory.set({ agentId, apiKey, key: 'n4', value: 'x', limit: 3 })).toEqual({ ok: false, reason: 'full', limit: 3 });
    expect(await memory.set({ agentId, apiKey, key: 'n2', value: 'replaced', limit: 3 })).toMatchObject({ ok: true, created: false });
    expect(await memory.delete(agentId, apiKey, 'n1')).toEqual({ ok: true, deleted: true });
    expect(await memory.set({ agentId, apiKey, key: 'n4', value: 'x', limit: 3 })).toMatchObject({ ok: true, created: true });
  });

  it('holds the limit under concurrent sets of new keys', async () => {
    const { agentId, apiKey } = await citizen();
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => memory.set({ agentId, apiKey, key: `k${i}`, value: 'v', limit: 5 })));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(5);
    expect(outcomes.filter((o) => !o.ok && o.reason === 'full')).toHaveLength(7);
    expect(await noteRows(agentId)).toHaveLength(5);
  });

  it('leaves one row for concurrent first sets of one key, under one data key', async () => {
    const { agentId, apiKey } = await citizen();
    const values = Array.from({ length: 20 }, (_, i) => `value ${i}`);
    const outcomes = await Promise.all(values.map((value) => memory.set({ agentId, apiKey, key: 'same', value, limit: LIMIT })));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(outcomes.filter((o) => o.ok && o.created)).toHaveLength(1);
    expect(await noteRows(agentId)).toHaveLength(1);
    const keys = await database.db.selectFrom('vault.memory_keys').selectAll().where('agent_id', '=', agentId).execute();
    expect(keys).toHaveLength(1);
    const got = await memory.get(agentId, apiKey, 'same');
    expect(got.ok && values).toContain(got.ok && got.note!.value);
  });

  it('carries the notes over a rotation: the new key reads them, the old one is refused', async () => {
    const { agentId, apiKey } = await citizen();
    await memory.set({ agentId, apiKey, key: 'kept', value: 'across rotations', limit: LIMIT });
    const before = await database.db.selectFrom('vault.memory_keys').selectAll().where('agent_id', '=', agentId).executeTakeFirstOrThrow();
    const newKey = newApiKey();
    expect(await vault.rotateKey(agentId, apiKey, newKey)).toBe(true);
    const after = await database.db.selectFrom('vault.memory_keys').selectAll().where('agent_id', '=', agentId).executeTakeFirstOrThrow();
    expect(after.salt).not.toBe(before.salt);
    expect(after.wrapped_dek).not.toBe(before.wrapped_dek);
    expect(await memory.get(agentId, newKey, 'kept')).toMatchObject({ ok: true, note: { value: 'across rotations' } });
    expect(await memory.get(agentId, apiKey, 'kept')).toEqual({ ok: false, reason: 'unauthorized' });
    expect(await vault.rotateKey(agentId, apiKey, newApiKey())).toBe(false);
  });

  it('rolls the credential back when the re-wrap fails: rotation and re-wrap are one transaction', async () => {
    const { agentId, apiKey } = await citizen();
    await memory.set({ agentId, apiKey, key: 'k', value: 'v', limit: LIMIT });
    // A data key wrapped under some other key: the re-wrap cannot open it and must take the rotation down with it.
    const alien = wrapDataKey(newDataKey(), newApiKey(), agentId);
    await database.db.updateTable('vault.memory_keys').set({ salt: alien.salt, wrapped_dek: alien.wrapped }).where('agent_id', '=', agentId).execute();
    const newKey = newApiKey();
    await expect(vault.rotateKey(agentId, apiKey, newKey)).rejects.toThrow();
    expect(await vault.authenticate(apiKey)).toBe(agentId);
    expect(await vault.authenticate(newKey)).toBeUndefined();
    const credential = await database.db.selectFrom('vault.credentials').selectAll().where('agent_id', '=', agentId).executeTakeFirstOrThrow();
    expect(credential.key_hash).toBe(hashApiKey(apiKey));
    expect(credential.rotated_at).toBeNull();
  });

  it('makes a note operation that meets a rotation in flight wait for it, then refuse the replaced key', async () => {
    const { agentId, apiKey } = await citizen();
    await memory.set({ agentId, apiKey, key: 'k', value: 'v', limit: LIMIT });
    const newKey = newApiKey();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let rewrapped!: () => void;
    const inFlight = new Promise<void>((resolve) => (rewrapped = resolve));
    // What rotateKey does, held open before its commit.
    const rotation = database.db.transaction().execute(async (trx) => {
      await trx.updateTable('vault.credentials').set({ key_hash: hashApiKey(newKey) }).where('agent_id', '=', agentId).execute();
      await memory.rewrap(trx, agentId, apiKey, newKey);
      rewrapped();
      await released;
    });
    await inFlight;
    const waiting = memory.set({ agentId, apiKey, key: 'k', value: 'written with the old key', limit: LIMIT });
    await until('the set to wait on the credential lock', 10_000, async () => {
      const rows = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query ilike '%credentials%'`.execute(database.db);
      return rows.rows[0]!.n > 0;
    }, 10);
    release();
    await rotation;
    expect(await waiting).toEqual({ ok: false, reason: 'unauthorized' });
    expect(await memory.get(agentId, newKey, 'k')).toMatchObject({ ok: true, note: { value: 'v' } });
  });

  it('never leaves a data key under a dead key when first sets race a rotation', async () => {
    for (let round = 0; round < 12; round++) {
      const { agentId, apiKey } = await citizen();
      const newKey = newApiKey();
      const sets = Array.from({ length: 4 }, (_, i) => memory.set({ agentId, apiKey, key: `k${i}`, value: `v${i}`, limit: LIMIT }));
      const rotated = vault.rotateKey(agentId, apiKey, newKey);
      const outcomes = await Promise.all(sets);
      expect(await rotated).toBe(true);
      const listed = await memory.list(agentId, newKey);
      if (!listed.ok) throw new Error('the new key was refused');
      expect(listed.notes.map((n) => n.key)).toEqual(outcomes.flatMap((o, i) => (o.ok ? [`k${i}`] : [])));
      expect(outcomes.every((o) => o.ok || o.reason === 'unauthorized')).toBe(true);
      expect(await memory.list(agentId, apiKey)).toEqual({ ok: false, reason: 'unauthorized' });
    }
  });

  it('needs the API key, not the master key: the master key opens no memory row', async () => {
    const { agentId, apiKey } = await citizen();
    await memory.set({ agentId, apiKey, key: 'k', value: 'secret plan', limit: LIMIT });
    const row = await database.db.selectFrom('vault.memory_keys').selectAll().where('agent_id', '=', agentId).executeTakeFirstOrThrow();
    expect(() => unseal(masterKey, row.wrapped_dek, `memory-dek:${agentId}`)).toThrow();
    const [note] = await noteRows(agentId);
    expect(() => unseal(masterKey, note!.sealed_value!, `memory-value:${agentId}:${note!.id}`)).toThrow();
    // Another process with another master key reads the note all the same, given the citizen's key.
    const elsewhere = new Vault(database, randomBytes(32));
    expect(await elsewhere.memory.get(agentId, apiKey, 'k')).toMatchObject({ ok: true, note: { value: 'secret plan' } });
  });
});
