import { createHash, randomBytes } from 'node:crypto';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { MediaStore } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

jest.setTimeout(60_000);

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Every byte value, so that nothing on the way (escaping, text decoding) can pass unnoticed. */
const EVERY_BYTE = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe.each([
  ['PostgreSQL', true],
  ['PGlite (the embedded default)', false],
])('the content-addressed media store on %s', (_name, server) => {
  let db: FreshDatabase | undefined;
  let database: SqlDatabase;
  let media: MediaStore;

  beforeAll(async () => {
    db = server ? await freshDatabase('media') : undefined;
    database = await openDatabase({ url: db?.url, dataDir: tempDir('media'), poolSize: 12 });
    media = await new MediaStore(database).init();
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const rows = async (hash: string) => (await database.db.selectFrom('vault.media').select(['sha256', 'size']).where('sha256', '=', hash).execute()).length;

  it('stores bytes under their sha256 and gives them back exactly, with type and size', async () => {
    const bytes = Buffer.concat([EVERY_BYTE, randomBytes(1000)]);
    const put = await media.put(bytes, 'image/png');
    expect(put).toEqual({ sha256: sha256(bytes), size: bytes.length });
    const got = await media.get(put.sha256);
    expect(got).toMatchObject({ sha256: put.sha256, contentType: 'image/png', size: bytes.length });
    expect(Buffer.isBuffer(got!.bytes)).toBe(true);
    expect(got!.bytes.equals(bytes)).toBe(true);
    expect(got!.createdAt).toBeInstanceOf(Date);
    expect(await media.has(put.sha256)).toBe(true);
  });

  it('takes a Uint8Array view as its bytes, not the buffer behind it', async () => {
    const backing = randomBytes(64);
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 8, 16);
    const put = await media.put(view, 'application/json');
    expect(put.sha256).toBe(sha256(view));
    expect((await media.get(put.sha256))!.bytes.equals(Buffer.from(view))).toBe(true);
  });

  it('is idempotent: the same bytes again are the same row, the first type standing', async () => {
    const bytes = randomBytes(300);
    const first = await media.put(bytes, 'image/gif');
    const again = await media.put(Buffer.from(bytes), 'image/webp');
    expect(again).toEqual(first);
    expect(await rows(first.sha256)).toBe(1);
    expect((await media.get(first.sha256))!.contentType).toBe('image/gif');
  });

  it('lets concurrent puts of the same bytes all succeed, leaving one row', async () => {
    const bytes = randomBytes(256 * 1024);
    const puts = await Promise.all(Array.from({ length: 16 }, () => media.put(Buffer.from(bytes), 'image/jpeg')));
    expect(new Set(puts.map((p) => p.sha256))).toEqual(new Set([sha256(bytes)]));
    expect(await rows(sha256(bytes))).toBe(1);
    expect((await media.get(sha256(bytes)))!.bytes.equals(bytes)).toBe(true);
  });

  it('answers nothing for an unknown or malformed address', async () => {
    expect(await media.get(sha256(randomBytes(8)))).toBeUndefined();
    expect(await media.has(sha256(randomBytes(8)))).toBe(false);
    for (const bad of ['', 'abc', 'AB'.repeat(32), `${'a'.repeat(63)}g`, `${'a'.repeat(64)} `, "' or 1=1 --"]) {
      expect(await media.get(bad)).toBeUndefined();
      expect(await media.has(bad)).toBe(false);
    }
  });

  it('refuses a row whose address is not a sha256, even written around the store', async () => {
    await expect(
      database.db.insertInto('vault.media').values({ sha256: 'not-a-hash', content_type: 'image/png', bytes: Buffer.from('x'), size: 1 }).execute(),
    ).rejects.toThrow(/check/);
  });

  it('migrates once: a second store on the same database starts without error and sees the same rows', async () => {
    const bytes = randomBytes(10);
    const { sha256: hash } = await media.put(bytes, 'image/png');
    const second = await new MediaStore(database).init();
    expect((await second.get(hash))!.bytes.equals(bytes)).toBe(true);
  });
});

describe('concurrent puts from separate connection pools (two processes)', () => {
  let db: FreshDatabase;
  let one: SqlDatabase;
  let two: SqlDatabase;

  beforeAll(async () => {
    db = await freshDatabase('media_race');
    one = await openDatabase({ url: db.url, dataDir: tempDir('media-race') });
    two = await openDatabase({ url: db.url, dataDir: tempDir('media-race') });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await db?.drop();
  });

  it('both start (migrations race) and both puts of the same bytes succeed', async () => {
    const [a, b] = await Promise.all([new MediaStore(one).init(), new MediaStore(two).init()]);
    const bytes = randomBytes(4096);
    const results = await Promise.all([...Array.from({ length: 8 }, () => a.put(bytes, 'image/png')), ...Array.from({ length: 8 }, () => b.put(bytes, 'image/png'))]);
    expect(new Set(results.map((r) => r.sha256)).size).toBe(1);
    const count = await one.db.selectFrom('vault.media').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });
});
