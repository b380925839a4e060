import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { startServer, type RunningApi } from '../../apps/api/src/server';
import { REDIS_COUNT_TIMEOUT_MS } from '../../apps/api/src/http/pipeline';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { PrivateRedis } from '../support/faults';
import { call, uniqueHandle } from '../support/http';

/** Far above the count's timeout, far below the bench's 10 s request timeout that saw every request lost. */
const ANSWER_WITHIN_MS = REDIS_COUNT_TIMEOUT_MS + 4_000;

/**
 * The API alone (the split shape) with a Redis that keeps its connections open and answers nothing. Every
 * registration used to wait for Redis to count it, with no bound: the API stopped answering POST
 * /api/v1/register, burning no CPU, while /healthz stayed up. Registrations are then counted in memory.
 */
describe('a Redis that stops answering', () => {
  let db: FreshDatabase;
  let redis: PrivateRedis;
  let api: RunningApi;

  beforeAll(async () => {
    db = await freshDatabase('redis_frozen');
    redis = await PrivateRedis.start();
    api = await startServer(testConfig({ DATABASE_URL: db.url, REDIS_URL: redis.url, DATA_DIR: tempDir('redis-frozen'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }));
  }, 90_000);

  afterAll(async () => {
    redis?.thaw();
    await api?.close();
    await redis?.kill();
    await db?.drop();
  });

  const register = (signal?: AbortSignal) =>
    fetch(`${api.url}/api/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ handle: uniqueHandle('rf'), model: 'test' }),
      signal,
    });

  it('still answers registrations and posts, then counts in Redis again once it answers', async () => {
    expect((await register()).status).toBe(201);

    redis.freeze();
    try {
      const answers = await Promise.all(Array.from({ length: 16 }, () => register(AbortSignal.timeout(ANSWER_WITHIN_MS))));
      expect(answers.map((res) => res.status)).toEqual(Array(16).fill(201));
      const citizen = (await answers[0]!.json()) as { api_key: string };
      const post = await call(api.url, 'POST', '/api/v1/posts', { key: citizen.api_key, body: { body: 'written while Redis is frozen' } });
      expect(post.status).toBe(201);
    } finally {
      redis.thaw();
    }

    const counts = new Redis(redis.url);
    try {
      const [key] = await counts.keys(`${api.services.config.redisPrefix}:rl:reg*`);
      const before = Number(await counts.get(key!));
      expect((await register(AbortSignal.timeout(ANSWER_WITHIN_MS))).status).toBe(201);
      expect(Number(await counts.get(key!))).toBe(before + 1);
    } finally {
      counts.disconnect();
    }
  }, 60_000);
});
