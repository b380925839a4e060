import type pg from 'pg';
import type { RunningServer } from '../../scripts/embedded';
import { runAudit } from '../support/audit';
import { call } from '../support/http';
import { tamperableService } from '../support/servers';
import { freePort } from '../support/ports';

// `npm run audit` against the real service: it verifies an intact chain, and names the entry whose
// served copy was changed behind the service's back.

jest.setTimeout(60_000);

const CITIZENS = 30;
const TAMPERED_SEQ = 7;

let server: RunningServer;
let sql: pg.Client;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ server, sql, close } = await tamperableService('audit', CITIZENS));
});

afterAll(() => close?.());

async function attest() {
  const reply = await call(server.url, 'GET', '/api/v1/attest');
  expect(reply.status).toBe(200);
  return reply.body as { head: string; length: number; verified: { ok: boolean; checked: number; first_bad_seq?: number; reason?: string } };
}

/** Runs `update <table> set <column> = replace(...)` on one row and proves its bytes changed. */
async function tamper(table: string, column: string, where: string, params: unknown[]): Promise<void> {
  const read = async () => (await sql.query(`select ${column} as v from ${table} where ${where}`, params)).rows.map((r) => r.v as string);
  const [before] = await read();
  expect(before).toContain('"model":"m"');
  const result = await sql.query(`update ${table} set ${column} = replace(${column}, '"model":"m"', '"model":"x"') where ${where}`, params);
  expect(result.rowCount).toBe(1);
  const [after] = await read();
  expect(after).not.toBe(before);
}

describe('npm run audit', () => {
  let length: number;
  let head: string;

  it('verifies the intact chain from the public API alone', async () => {
    ({ length, head } = await attest());
    // @treasury and the service token it deployed at first boot, then one RegisterCitizen entry each.
    expect(length).toBe(2 + CITIZENS);

    const run = await runAudit('--url', server.url);

    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout.trim()).toBe(`OK: ${length} entries verified, head ${head}`);
  });

  it('--json prints a machine-readable result', async () => {
    const run = await runAudit('--url', server.url, '--json');

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, entries: length, head });
  });

  it('a changed stored event is reported by /attest at its seq', async () => {
    await tamper('es.events', 'data', `stream = 'ledger' and revision = $1`, [TAMPERED_SEQ]);

    const attestation = await attest();

    expect(attestation.length).toBe(length);
    expect(attestation.verified).toMatchObject({ ok: false, first_bad_seq: TAMPERED_SEQ });
    // The served copy is still intact, but the audit does not call a chain good that the service itself cannot verify.
    const run = await runAudit('--url', server.url);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`^FAILED: first bad seq ${TAMPERED_SEQ}: /attest reports the stored chain does not verify .*the served copy does`));
  });

  it('a changed served entry fails the audit, naming its seq', async () => {
    await tamper('rm.entries', 'body', 'seq = $1', [TAMPERED_SEQ]);

    const run = await runAudit('--url', server.url);

    expect(run.code).toBe(1);
    expect(run.stdout.trim()).toBe(`FAILED: first bad seq ${TAMPERED_SEQ}: hash does not match the content`);
  });

  it('exits 2 on usage and network errors', async () => {
    const missing = await runAudit();
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--url is required');

    const unreachable = await runAudit('--url', `http://127.0.0.1:${await freePort()}`);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toMatch(/failed after 3 retries: ECONNREFUSED/);
  });
});
