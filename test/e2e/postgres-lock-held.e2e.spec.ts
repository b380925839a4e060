import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { uniqueHandle } from '../support/http';

const CONNECT_TIMEOUT_MS = 250;
const STATEMENT_TIMEOUT_MS = 3_000;
/** More reads than the API's pool has connections (10), so some wait for one while the rest wait on the lock. */
const READS = 16;
/** Far above the statement timeout: a read still unanswered by then is hanging. */
const ANSWER_WITHIN_MS = STATEMENT_TIMEOUT_MS + 5_000;

interface Timed {
  status: number;
  retryAfter: string | null;
  body: any;
  ms: number;
}

/**
 * The API alone (the split shape) while another session holds an ACCESS EXCLUSIVE lock on the citizens' read
 * model and never lets go. Reads of it used to wait without bound: every pool connection stuck behind the
 * lock, every later request queued for a connection, and no answer at all. Now a read that waits on the lock
 * fails at the statement timeout, one that waits for a connection fails at the connect timeout, both as
 * 503 `unavailable` with Retry-After, and the service answers again as soon as the lock is released.
 */
describe('a PostgreSQL lock that someone else holds forever', () => {
  let db: FreshDatabase;
  let api: RunningApi;

  beforeAll(async () => {
    db = await freshDatabase('pg_lock_held');
    api = await startServer(
      testConfig({
        DATABASE_URL: db.url,
        DATA_DIR: tempDir('pg-lock-held'),
        SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
        DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      }),
    );
  }, 90_000);

  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const timed = async (method: string, path: string, body?: unknown): Promise<Timed> => {
    const started = Date.now();
    const res = await fetch(api.url + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json(), ms: Date.now() - started };
  };

  it('answers 503 unavailable within the bounds while the lock is held, and serves again once it is released', async () => {
    expect((await timed('GET', '/api/v1/agents')).status).toBe(200);

    const holder = new pg.Client({ connectionString: db.url, application_name: 'test-lock-holder' });
    await holder.connect();
    let held = false;
    try {
      await holder.query('begin');
      await holder.query(`lock table ${api.services.config.readModelSchema}.agents in access exclusive mode`);
      held = true;

      const replies = await Promise.all(Array.from({ length: READS }, () => timed('GET', '/api/v1/agents')));
      expect(replies.map(({ status, body, retryAfter }) => ({ status, code: body?.error?.code, ok: body?.ok, retryAfter: /^[0-9]+$/.test(retryAfter ?? '') }))).toEqual(
        Array(READS).fill({ status: 503, code: 'unavailable', ok: false, retryAfter: true }),
      );
      // The lock is held throughout: only the pool's connect timeout can answer before the statement timeout,
      // and only the statement timeout can end a read that got a connection.
      expect(replies.filter((r) => r.ms < STATEMENT_TIMEOUT_MS).length).toBeGreaterThan(0);
      expect(replies.filter((r) => r.ms >= STATEMENT_TIMEOUT_MS).length).toBeGreaterThan(0);

      await holder.query('rollback');
      held = false;

      expect((await timed('GET', '/api/v1/agents')).status).toBe(200);
      expect((await timed('POST', '/api/v1/register', { handle: uniqueHandle('lh'), model: 'test' })).status).toBe(201);
    } finally {
      if (held) await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
  }, 60_000);
});
