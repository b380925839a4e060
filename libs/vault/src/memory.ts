import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { execAll, type Migration, newUlid } from '@svc/readmodel';
import { VaultStore } from './vaultStore';
import { hashApiKey, sameHash, seal, unseal } from './crypto';


const KEK_INFO = 'svc memory v1';

const migrations: Migration[] = [
  {
    name: 'memory_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.memory_keys (
           agent_id text primary key,
           salt text not null,
           wrapped_dek text not null,
           wrapped_at bigint not null)`,
        `create table ${schema}.memory_notes (
           id text primary key,
           agent_id text not null references ${schema}.memory_keys (agent_id) on delete cascade,
           key_id text not null,
           sealed_key text not null,
           sealed_value text not null,
           updated_at bigint not null,
           unique (agent_id, key_id))`,
      ]),
  },
];

/** A citizen's data key as stored: sealed under a key derived from the API key and this salt. */
export interface WrappedDataKey {
  /** base64 of 16 random bytes, the HKDF salt. */
  salt: string;
  wrapped: string;
}

/** HKDF-SHA256 of the full API key: only the holder of the key can derive it, the service keeps nothing that can. */
export function keyEncryptionKey(apiKey: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', apiKey, salt, KEK_INFO, 32));
}

function dataKeyContext(agentId: string): string {
  return `memory-dek:${agentId}`;
}

export function newDataKey(): Buffer {
  return randomBytes(32);
}

export function wrapDataKey(dataKey: Buffer, apiKey: string, agentId: string): WrappedDataKey {
  const salt = randomBytes(16);
  return { salt: salt.toString('base64'), wrapped: seal(keyEncryptionKey(apiKey, salt), dataKey, dataKeyContext(agentId)) };
}

/** Throws when `apiKey` is not the key the data key was wrapped with (or the row belongs to another citizen). */
export function unwrapDataKey(stored: WrappedDataKey, apiKey: string, agentId: string): Buffer {
  return unseal(keyEncryptionKey(apiKey, Buffer.from(stored.salt, 'base64')), stored.wrapped, dataKeyContext(agentId));
}

/** Finds a note by its key name without storing the name: a keyed hash under the citizen's data key. */
export function noteKeyId(dataKey: Buffer, key: string): string {
  return createHmac('sha256', dataKey).update(key, 'utf8').digest('hex');
}

// Name and value carry different contexts, so one cannot be swapped for the other, nor moved to another note.
const nameContext = (agentId: string, noteId: string) => `memory-key:${agentId}:${noteId}`;
const valueContext = (agentId: string, noteId: string) => `memory-value:${agentId}:${noteId}`;

export interface SealedNote {
  sealedKey: string;
  sealedValue: string;
}

export function sealNote(dataKey: Buffer, agentId: string, noteId: string, key: string, value: string): SealedNote {
  return {
    sealedKey: seal(dataKey, Buffer.from(key, 'utf8'), nameContext(agentId, noteId)),
    sealedValue: seal(dataKey, Buffer.from(value, 'utf8'), valueContext(agentId, noteId)),
  };
}

export function openNote(dataKey: Buffer, agentId: string, noteId: string, sealed: SealedNote): { key: string; value: string } {
  return {
    key: unseal(dataKey, sealed.sealedKey, nameContext(agentId, noteId)).toString('utf8'),
    value: unseal(dataKey, sealed.sealedValue, valueContext(agentId, noteId)).toString('utf8'),
  };
}

export interface MemoryNote {
  key: string;
  value: string;
  updatedAt: number;
}

/** The presented key is no longer the citizen's (a rotation committed since it was checked). */
export type MemoryDenied = { ok: false; reason: 'unauthorized' };

export type SetNoteOutcome = { ok: true; created: boolean; updatedAt: number } | MemoryDenied | { ok: false; reason: 'full'; limit: number };

export interface SetNote {
  agentId: string;
  /** The caller's API key, as presented: the data key is unwrapped with it. */
  apiKey: string;
  /** Already validated by the caller. */
  key: string;
  value: string;
  /** How many notes one citizen may hold; replacing one never counts against it. */
  limit: number;
}

const DENIED: MemoryDenied = { ok: false, reason: 'unauthorized' };

/**
 * Memory notes: private to their owner, sealed (name and value) with the owner's data key, which is
 * stored only wrapped under the owner's API key. Every operation locks the owner's credential row
 * (FOR SHARE) and checks the presented key against it in the same transaction; a rotation updates
 * that row and re-wraps the data key in one transaction (`rewrap`), so the two never interleave.
 */
export class MemoryStore extends VaultStore {
  protected readonly migrations = migrations;

  private t(name: 'memory_keys' | 'memory_notes' | 'credentials'): string {
    return `${this.schema}.${name}`;
  }

  private async holdsKey(trx: Kysely<any>, agentId: string, apiKey: string): Promise<boolean> {
    const row = await trx.selectFrom(this.t('credentials')).select('key_hash').where('agent_id', '=', agentId).forShare().executeTakeFirst();
    return row !== undefined && sameHash(row.key_hash as string, hashApiKey(apiKey));
  }

  private async dataKey(trx: Kysely<any>, agentId: string, apiKey: string, forUpdate: boolean): Promise<Buffer | undefined> {
    let query = trx.selectFrom(this.t('memory_keys')).select(['salt', 'wrapped_dek']).where('agent_id', '=', agentId);
    if (forUpdate) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row ? unwrapDataKey({ salt: row.salt as string, wrapped: row.wrapped_dek as string }, apiKey, agentId) : undefined;
  }

  /** Creates or replaces the note `key`. Sets of one citizen run one at a time (the data key row is locked), which holds the limit. */
  async set(input: SetNote): Promise<SetNoteOutcome> {
    const { agentId, apiKey, key, value } = input;
    return this.database.db.transaction().execute(async (trx): Promise<SetNoteOutcome> => {
      if (!(await this.holdsKey(trx, agentId, apiKey))) return DENIED;
      let dataKey = await this.dataKey(trx, agentId, apiKey, true);
      if (!dataKey) {
        const fresh = wrapDataKey(newDataKey(), apiKey, agentId);
        await trx
          .insertInto(this.t('memory_keys'))
          .values({ agent_id: agentId, salt: fresh.salt, wrapped_dek: fresh.wrapped, wrapped_at: Date.now() })
          .onConflict((oc) => oc.column('agent_id').doNothing())
          .execute();
        // Ours, or the one a concurrent first set committed (wrapped under the same key).
        dataKey = (await this.dataKey(trx, agentId, apiKey, true))!;
      }
      const keyId = noteKeyId(dataKey, key);
      const now = Date.now();
      const existing = await trx
        .selectFrom(this.t('memory_notes'))
        .select('id')
        .where('agent_id', '=', agentId)
        .where('key_id', '=', keyId)
        .executeTakeFirst();
      if (existing) {
        const sealed = sealNote(dataKey, agentId, existing.id as string, key, value);
        await trx
          .updateTable(this.t('memory_notes'))
          .set({ sealed_key: sealed.sealedKey, sealed_value: sealed.sealedValue, updated_at: now })
          .where('id', '=', existing.id)
          .execute();
        return { ok: true, created: false, updatedAt: now };
      }
      const held = await trx
        .selectFrom(this.t('memory_notes'))
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agent_id', '=', agentId)
        .executeTakeFirst();
      if (Number(held?.n ?? 0) >= input.limit) return { ok: false, reason: 'full', limit: input.limit };
      const id = `note_${newUlid()}`;
      const sealed = sealNote(dataKey, agentId, id, key, value);
      await trx
        .insertInto(this.t('memory_notes'))
        .values({ id, agent_id: agentId, key_id: keyId, sealed_key: sealed.sealedKey, sealed_value: sealed.sealedValue, updated_at: now })
        .execute();
      return { ok: true, created: true, updatedAt: now };
    });
  }

  /** The note `key`, or `note: undefined` when there is none. */
  async get(agentId: string, apiKey: string, key: string): Promise<{ ok: true; note: MemoryNote | undefined } | MemoryDenied> {
    return this.database.db.transaction().execute(async (trx) => {
      if (!(await this.holdsKey(trx, agentId, apiKey))) return DENIED;
      const dataKey = await this.dataKey(trx, agentId, apiKey, false);
      if (!dataKey) return { ok: true as const, note: undefined };
      const row = await trx
        .selectFrom(this.t('memory_notes'))
        .select(['id', 'sealed_key', 'sealed_value', 'updated_at'])
        .where('agent_id', '=', agentId)
        .where('key_id', '=', noteKeyId(dataKey, key))
        .executeTakeFirst();
      return { ok: true as const, note: row ? toNote(dataKey, agentId, row) : undefined };
    });
  }

  /** Every note of the citizen, sorted by key (names are sealed, so the sort happens here). */
  async list(agentId: string, apiKey: string): Promise<{ ok: true; notes: MemoryNote[] } | MemoryDenied> {
    return this.database.db.transaction().execute(async (trx) => {
      if (!(await this.holdsKey(trx, agentId, apiKey))) return DENIED;
      const dataKey = await this.dataKey(trx, agentId, apiKey, false);
      if (!dataKey) return { ok: true as const, notes: [] };
      const rows = await trx
        .selectFrom(this.t('memory_notes'))
        .select(['id', 'sealed_key', 'sealed_value', 'updated_at'])
        .where('agent_id', '=', agentId)
        .execute();
      const notes = rows.map((row) => toNote(dataKey, agentId, row));
      notes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      return { ok: true as const, notes };
    });
  }

  /** Deletes the row itself: nothing of the note stays behind. */
  async delete(agentId: string, apiKey: string, key: string): Promise<{ ok: true; deleted: boolean } | MemoryDenied> {
    return this.database.db.transaction().execute(async (trx) => {
      if (!(await this.holdsKey(trx, agentId, apiKey))) return DENIED;
      const dataKey = await this.dataKey(trx, agentId, apiKey, false);
      if (!dataKey) return { ok: true as const, deleted: false };
      const gone = await trx
        .deleteFrom(this.t('memory_notes'))
        .where('agent_id', '=', agentId)
        .where('key_id', '=', noteKeyId(dataKey, key))
        .executeTakeFirst();
      return { ok: true as const, deleted: Number(gone.numDeletedRows) === 1 };
    });
  }

  /**
   * Wraps the citizen's data key under `newKey`. Runs inside the rotation's transaction, after its
   * credential update, so the notes follow the key or the rotation does not happen at all.
   */
  async rewrap(trx: Kysely<any>, agentId: string, currentKey: string, newKey: string): Promise<void> {
    const row = await trx.selectFrom(this.t('memory_keys')).select(['salt', 'wrapped_dek']).where('agent_id', '=', agentId).forUpdate().executeTakeFirst();
    if (!row) return;
    const dataKey = unwrapDataKey({ salt: row.salt as string, wrapped: row.wrapped_dek as string }, currentKey, agentId);
    const next = wrapDataKey(dataKey, newKey, agentId);
    await trx
      .updateTable(this.t('memory_keys'))
      .set({ salt: next.salt, wrapped_dek: next.wrapped, wrapped_at: Date.now() })
      .where('agent_id', '=', agentId)
      .execute();
  }
}

function toNote(dataKey: Buffer, agentId: string, row: Record<string, unknown>): MemoryNote {
  const opened = openNote(dataKey, agentId, row.id as string, { sealedKey: row.sealed_key as string, sealedValue: row.sealed_value as string });
  return { key: opened.key, value: opened.value, updatedAt: Number(row.updated_at) };
}
