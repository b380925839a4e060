import { sql } from 'kysely';
import { liftTimeouts, migrate, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

const STATEMENT_TIMEOUT_MS = 200;
const TIMEOUTS = { connectMs: 2_000, statementMs: STATEMENT_TIMEOUT_MS, idleInTransactionMs: 5_000 };
const sleepLongerThanTheBound = sql`select pg_sleep(${(STATEMENT_TIMEOUT_MS * 3) / 1000})`;

const setting = async (database: SqlDatabase, name: string) =>
  (await sql<{ value: string }>`select current_setting(${name}) as value`.execute(database.db)).rows[0]!.value;

describe('bounded waits on a PostgreSQL server', () => {
  let db: FreshDatabase;
  let bounded: SqlDatabase;
  let unbounded: SqlDatabase;

  beforeAll(async () => {
    db = await freshDatabase('db_timeouts');
    bounded = await openDatabase({ url: db.url, dataDir: tempDir('db-timeouts'), timeouts: TIMEOUTS });
    unbounded = await openDatabase({ url: db.url, dataDir: tempDir('db-timeouts-none') });
  });

  afterAll(async () => {
    await bounded?.close();
    await unbounded?.close();
    await db?.drop();
  });

  it('sets the session bounds on a serving pool, and none on a pool opened without them (replay, tools)', async () => {
    expect(await setting(bounded, 'statement_timeout')).toBe(`${STATEMENT_TIMEOUT_MS}ms`);
    expect(await setting(bounded, 'idle_in_transaction_session_timeout')).toBe('5s');
    expect(await setting(unbounded, 'statement_timeout')).toBe('0');
    await expect(sleepLongerThanTheBound.execute(bounded.db)).rejects.toMatchObject({ code: '57014' });
    await expect(sleepLongerThanTheBound.execute(unbounded.db)).resolves.toBeDefined();
  });

  it('lets a migration run past the statement timeout, and keeps the bound outside it', async () => {
    const applied = await migrate(bounded.db, 'slow_migration', [{ name: 'slow_001', up: async (trx) => void (await sleepLongerThanTheBound.execute(trx)) }]);
    expect(applied).toEqual(['slow_001']);
    await expect(sleepLongerThanTheBound.execute(bounded.db)).rejects.toMatchObject({ code: '57014' });
  });

  it('lifts the bounds for one transaction only', async () => {
    await bounded.db.transaction().execute(async (trx) => {
      await liftTimeouts(trx);
      await sleepLongerThanTheBound.execute(trx);
    });
    expect(await setting(bounded, 'statement_timeout')).toBe(`${STATEMENT_TIMEOUT_MS}ms`);
  });
});
