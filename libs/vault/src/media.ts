import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { execAll, type Migration } from '@svc/readmodel';
import { VaultStore } from './vaultStore';

const migrations: Migration[] = [
  {
    name: 'media_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.media (
           sha256 text primary key check (sha256 ~ '^[0-9a-f]{64}$'),
           content_type text not null,
           bytes bytea not null,
           size integer not null,
           created_at timestamptz not null default now())`,
      ]),
  },
];

/** Lower-case hex of a SHA-256: the only shape of a media address. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface MediaObject {
  sha256: string;
  contentType: string;
  bytes: Buffer;
  size: number;
  createdAt: Date;
}

// bytea travels as base64 text, both ways: PGlite converts a bytea parameter or column byte by byte in
// JavaScript (seconds for 4 MB), and node-postgres would send it as hex, twice its size.
function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Content-addressed objects the service hosts (token images, metadata JSON): an object's address is the
 * sha256 of its bytes, so it never changes once written and the same bytes are stored once. They are
 * served publicly, but kept in the vault because they are primary data: nothing on the ledger can
 * rebuild them, and a projection rebuild must never drop them.
 */
export class MediaStore extends VaultStore {
  protected readonly migrations = migrations;

  private get table(): string {
    return `${this.schema}.media`;
  }

  /**
   * Stores the bytes under their sha256. Putting the same bytes again (or at the same moment, from another
   * process) is a no-op: the first row stands, with its content type.
   */
  async put(bytes: Uint8Array, contentType: string): Promise<{ sha256: string; size: number }> {
    const sha256 = sha256Hex(bytes);
    // A retried deploy sends the same image again: a lookup by key spares shipping megabytes to be dropped.
    if (await this.has(sha256)) return { sha256, size: bytes.byteLength };
    await this.database.db
      .insertInto(this.table)
      .values({ sha256, content_type: contentType, bytes: sql`decode(${toBase64(bytes)}, 'base64')`, size: bytes.byteLength })
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
    return { sha256, size: bytes.byteLength };
  }

  /** Whether an object is stored under this address, without reading its bytes. */
  async has(sha256: string): Promise<boolean> {
    if (!SHA256_HEX.test(sha256)) return false;
    const row = await this.database.db.selectFrom(this.table).select('sha256').where('sha256', '=', sha256).executeTakeFirst();
    return row !== undefined;
  }

  /** The object stored under this address; undefined for an unknown or malformed one. */
  async get(sha256: string): Promise<MediaObject | undefined> {
    if (!SHA256_HEX.test(sha256)) return undefined;
    const row = await this.database.db
      .selectFrom(this.table)
      .select(['sha256', 'content_type', sql<string>`encode(bytes, 'base64')`.as('bytes'), 'size', 'created_at'])
      .where('sha256', '=', sha256)
      .executeTakeFirst();
    if (!row) return undefined;
    return { sha256: row.sha256, contentType: row.content_type, bytes: Buffer.from(row.bytes, 'base64'), size: Number(row.size), createdAt: new Date(row.created_at) };
  }
}
