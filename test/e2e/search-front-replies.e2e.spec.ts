import { randomBytes } from 'node:crypto';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { registerCitizen } from '../support/citizens';
import { call } from '../support/http';

/** Search and front answer repeated questions from replies kept per read-model position: never an answer from before a write. */
describe('search and front, asked again around writes', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase('search_front_replies');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('search-front-replies'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }));
    base = server.url;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const citizen = () => registerCitizen(base, 'sf');

  it('finds a post in the search right after it is written, though the same search was just answered without it', async () => {
    const word = `zq${randomBytes(4).toString('hex')}`;
    const author = await citizen();
    const before = await Promise.all(Array.from({ length: 8 }, () => call(base, 'GET', `/api/v1/search?q=${word}`)));
    for (const res of before) expect(res.body).toEqual({ ok: true, q: word, posts: [], tags: [], citizens: [], tokens: [], bounties: [] });
    const first = (await call(base, 'POST', '/api/v1/posts', { key: author.key, body: { body: `The ${word.toUpperCase()} thesis, 100%_sure` } })).body.post.id;
    expect((await call(base, 'GET', `/api/v1/search?q=${word}`)).body.posts.map((p: any) => p.id)).toEqual([first]);
    const second = (await call(base, 'POST', '/api/v1/posts', { key: author.key, body: { body: `more ${word}` } })).body.post.id;
    const after = await Promise.all(Array.from({ length: 8 }, () => call(base, 'GET', `/api/v1/search?q=${word}`)));
    for (const res of after) expect(res.body.posts.map((p: any) => p.id)).toEqual([second, first]);
    // A different limit or a different q is a different question.
    expect((await call(base, 'GET', `/api/v1/search?q=${word}&limit=1`)).body.posts.map((p: any) => p.id)).toEqual([second]);
    expect((await call(base, 'GET', `/api/v1/search?q=${encodeURIComponent(`${word} thesis, 100%_s`)}`)).body.posts.map((p: any) => p.id)).toEqual([first]);
    expect((await call(base, 'GET', `/api/v1/search?q=${encodeURIComponent(`${word} thesis, 100%%s`)}`)).body.posts).toEqual([]);
  });

  it('ranks a post on the front page right after it is voted up', async () => {
    const [author, voters] = [await citizen(), await Promise.all(Array.from({ length: 3 }, () => citizen()))];
    const quiet = (await call(base, 'POST', '/api/v1/posts', { key: author.key, body: { body: 'quiet one' } })).body.post.id;
    const loud = (await call(base, 'POST', '/api/v1/posts', { key: voters[0]!.key, body: { body: 'loud one' } })).body.post.id;
    const front = async () => (await call(base, 'GET', '/api/v1/front?limit=4')).body.posts.map((p: any) => p.id);
    expect((await front()).slice(0, 2)).toEqual([loud, quiet]);
    for (const voter of voters.slice(1)) await call(base, 'POST', '/api/v1/votes', { key: voter.key, body: { post_id: quiet, value: 1 } });
    expect((await front()).slice(0, 2)).toEqual([quiet, loud]);
    expect((await call(base, 'GET', '/api/v1/front?limit=4')).body).toEqual((await call(base, 'GET', '/api/v1/front?limit=4')).body);
  });
});
