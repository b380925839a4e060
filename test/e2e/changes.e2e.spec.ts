import { registerCitizen } from '../support/citizens';
import { call } from '../support/http';
import { embeddedService, type EmbeddedService } from '../support/servers';
import { until } from '../support/until';

/**
 * /changes as the guide tells an agent to follow it: read, then poll `?after=<next_after>` with the last ETag, which
 * answers 304 while nothing is new; `wait` holds the poll until an entry lands.
 */
describe('GET /api/v1/changes: the ETag names the position, wait long-polls', () => {
  let service: EmbeddedService;
  let base: string;

  beforeAll(async () => {
    service = await embeddedService('changes');
    base = service.server.url;
    await registerCitizen(base, 'chg');
  }, 60_000);
  afterAll(async () => {
    await service?.close();
  });

  const changes = (query: string, etag?: string) => call(base, 'GET', `/api/v1/changes${query}`, etag === undefined ? {} : { headers: { 'if-none-match': etag } });

  it('answers the guide’s poll ?after=<next_after> with the last ETag 304 while nothing is new, and the new entry once one lands', async () => {
    const first = await changes('?after=-1&limit=1000');
    expect(first.status).toBe(200);
    expect(first.body.changes.length).toBeGreaterThan(0);
    const poll = await changes(`?after=${first.body.next_after}`, first.headers.get('etag')!);
    expect(poll.status).toBe(304);
    // Polling on with the tag the 304 carried stays 304.
    expect((await changes(`?after=${first.body.next_after}`, poll.headers.get('etag')!)).status).toBe(304);

    const written = await registerCitizen(base, 'chg');
    const fresh = await changes(`?after=${first.body.next_after}`, poll.headers.get('etag')!);
    expect(fresh.status).toBe(200);
    expect(fresh.body.changes.map((c: { actor: string }) => c.actor)).toEqual([written.id]);
    expect(fresh.body.next_after).toBeGreaterThan(first.body.next_after);
  });

  it('never answers 304 for a page holding entries the tag did not cover: another limit, since or an earlier after', async () => {
    const head = (await changes('?after=-1&limit=1000')).body.next_after as number;
    const one = await changes(`?after=${head - 2}&limit=1`);
    const tag = one.headers.get('etag')!;
    expect((await changes(`?after=${head - 2}&limit=1`, tag)).status).toBe(304);
    const wider = await changes(`?after=${head - 2}&limit=2`, tag);
    expect([wider.status, wider.body.changes.length]).toEqual([200, 2]);
    const earlier = await changes(`?after=${head - 3}&limit=2`, tag);
    expect([earlier.status, earlier.body.changes.length]).toEqual([200, 2]);

    const all = await changes('?since=0');
    const sinceTag = all.headers.get('etag')!;
    expect((await changes('?since=0', sinceTag)).status).toBe(304);
    // The same position, but from the start and filtered by time: entries the tag's page had too, yet another query.
    expect((await changes(`?after=-1&since=${all.body.changes.at(-1).at}`, sinceTag)).status).toBe(200);
    expect((await changes(`?after=${all.body.next_after}&since=0`, sinceTag)).status).toBe(304);
  });

  it('holds ?wait= until an entry past `after` lands, and answers it at once', async () => {
    const now = await changes('?after=-1&limit=1000');
    const started = Date.now();
    const held = changes(`?after=${now.body.next_after}&wait=20`, now.headers.get('etag')!);
    await until('the poll to be held', 10_000, () => service.server.services.pulse.held > 0);
    const written = await registerCitizen(base, 'woke');
    const woken = await held;
    expect(woken.status).toBe(200);
    expect(woken.body.changes.map((c: { actor: string }) => c.actor)).toEqual([written.id]);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(service.server.services.pulse.held).toBe(0);
  });

  it('answers a wait that saw nothing 304 with the tag presented, and a wait over 25 s 400', async () => {
    const now = await changes('?after=-1&limit=1000');
    const quiet = await changes(`?after=${now.body.next_after}&wait=0.5`, now.headers.get('etag')!);
    expect(quiet.status).toBe(304);
    const tooLong = await changes(`?after=${now.body.next_after}&wait=26`);
    expect([tooLong.status, tooLong.body.error.code, tooLong.body.error.field]).toEqual([400, 'invalid_request', 'wait']);
  });
});
