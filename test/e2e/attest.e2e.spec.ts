import type pg from 'pg';
import type { RunningServer } from '../../scripts/embedded';
import { call } from '../support/http';
import { tamperableService } from '../support/servers';
import { until } from '../support/until';

// GET /api/v1/attest?full=true against the real service: a row changed by a superuser with the triggers
// off is invisible to the incremental answer, and the full pass it starts names it.

jest.setTimeout(60_000);

const CITIZENS = 12;
const TAMPERED_SEQ = 6;

let server: RunningServer;
let sql: pg.Client;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ server, sql, close } = await tamperableService('attest', CITIZENS));
});

afterAll(() => close?.());

interface Attestation {
  head: string;
  length: number;
  verified: { ok: boolean; checked: number; first_bad_seq?: number; checked_now?: { from: number; to: number }; from_earlier?: { from: number; to: number }; last_full_at?: number; last_full_ok?: boolean };
  full?: { state: string; trigger: string; started_at: number; head_at_start: number; checked: number; finished_at?: number; ok?: boolean; first_bad?: { seq: number; reason: string; expected_hash?: string; stored_hash?: string } };
}

async function attest(query = ''): Promise<Attestation> {
  const reply = await call<Attestation>(server.url, 'GET', `/api/v1/attest${query}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

/** Polls until the full pass finishes, each poll awaiting its reply, within the file's test timeout. */
const untilFullFinished = (): Promise<Attestation> =>
  until('the full pass to finish', 60_000, async () => {
    const answer = await attest();
    return answer.full && answer.full.state !== 'running' ? answer : undefined;
  }, 0);

describe('GET /api/v1/attest?full=true', () => {
  let length: number;

  it('answers the incremental check, naming the range it checked now and the one it took from earlier', async () => {
    const first = await attest();
    length = first.length;
    expect(first.verified.ok).toBe(true);
    expect(first.full).toBeUndefined();
    const again = await attest();
    expect(again.verified).toEqual({ ok: true, checked: length, from_earlier: { from: 0, to: length - 1 } });
  });

  it('finds a row a superuser changed inside the verified prefix with the triggers off', async () => {
    await sql.query('set session_replication_role = replica');
    const changed = await sql.query(`update es.events set data = replace(data, '"model":"m"', '"model":"x"') where stream = 'ledger' and revision = $1`, [TAMPERED_SEQ]);
    await sql.query('set session_replication_role = origin');
    expect(changed.rowCount).toBe(1);
    expect((await attest()).verified).toMatchObject({ ok: true, checked: length });

    const started = await attest('?full=true');
    expect(started.full).toMatchObject({ trigger: 'request', head_at_start: length - 1 });
    const done = await untilFullFinished();

    expect(done.full).toMatchObject({ state: 'finished', ok: false, checked: TAMPERED_SEQ, first_bad: { seq: TAMPERED_SEQ, reason: 'hash does not match the content' } });
    expect(done.full!.first_bad!.expected_hash).not.toBe(done.full!.first_bad!.stored_hash);
    expect(done.verified).toMatchObject({ ok: false, first_bad_seq: TAMPERED_SEQ, last_full_at: done.full!.finished_at, last_full_ok: false });
  });

  it('starts one pass per address per minute: the next ask is refused with Retry-After', async () => {
    const reply = await call(server.url, 'GET', '/api/v1/attest?full=true');
    expect(reply.status).toBe(429);
    expect(reply.body).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses a full flag that is not a boolean', async () => {
    const reply = await call(server.url, 'GET', '/api/v1/attest?full=maybe');
    expect(reply.status).toBe(400);
  });
});
