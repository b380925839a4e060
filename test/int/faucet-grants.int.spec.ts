import { randomUUID } from 'node:crypto';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { FaucetGrants, type FaucetRequest } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

jest.setTimeout(60_000);

const SOL = 1_000_000_000n;
const HOUR = 3_600_000;

describe.each([
  ['PostgreSQL', true],
  ['PGlite (the embedded default)', false],
])('the faucet’s hourly allowance on %s', (_name, server) => {
  let db: FreshDatabase | undefined;
  let database: SqlDatabase;
  let grants: FaucetGrants;

  beforeAll(async () => {
    db = server ? await freshDatabase('faucet_grants') : undefined;
    database = await openDatabase({ url: db?.url, dataDir: tempDir('faucet-grants'), poolSize: 12 });
    grants = await new FaucetGrants(database).init();
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const ask = (agentId: string, sol: bigint, now: number, idempotencyKey?: string) =>
    grants.reserve({ agentId, idempotencyKey, lamports: sol * SOL, capLamports: 20n * SOL, windowMs: HOUR, now } satisfies FaucetRequest);

  it('reserves up to the cap, then says what is used and when enough of it ages out', async () => {
    const agent = `agent_${randomUUID()}`;
    const t0 = 1_000_000_000_000;
    expect(await ask(agent, 8n, t0)).toMatchObject({ kind: 'reserved', grant: { agentId: agent, lamports: 8n * SOL, at: t0, airdrop: null, receipt: null } });
    await ask(agent, 7n, t0 + 1000);
    await ask(agent, 5n, t0 + 2000);
    // 20 taken: 6 more fits once the 8 (and nothing later) has aged out; 14 once the 7 has too.
    expect(await ask(agent, 6n, t0 + 5000)).toEqual({ kind: 'over', usedLamports: 20n * SOL, freesAt: t0 + HOUR });
    expect(await ask(agent, 14n, t0 + 5000)).toEqual({ kind: 'over', usedLamports: 20n * SOL, freesAt: t0 + 1000 + HOUR });
    // More than the cap itself never fits: the answer is the whole window from now.
    expect(await ask(agent, 21n, t0 + 5000)).toEqual({ kind: 'over', usedLamports: 20n * SOL, freesAt: t0 + 5000 + HOUR });
    expect((await ask(agent, 6n, t0 + HOUR)).kind).toBe('reserved');
    // Another citizen has an allowance of its own.
    expect((await ask(`agent_${randomUUID()}`, 20n, t0 + 5000)).kind).toBe('reserved');
  });

  it('gives a retry under the same key the grant it reserved, with what happened to it since', async () => {
    const agent = `agent_${randomUUID()}`;
    const key = randomUUID();
    const first = await ask(agent, 3n, 5_000, key);
    if (first.kind !== 'reserved') throw new Error(`not reserved: ${first.kind}`);
    await grants.accepted(first.grant.id, { signature: 'sig1', blockhash: 'hash1', lastValidBlockHeight: 42 });
    await grants.recorded(first.grant.id, { seq: 7, hash: 'h7' });
    expect(await ask(agent, 3n, 6_000, key)).toEqual({
      kind: 'earlier',
      grant: { ...first.grant, airdrop: { signature: 'sig1', blockhash: 'hash1', lastValidBlockHeight: 42 }, receipt: { seq: 7, hash: 'h7' } },
    });
  });

  it('counts a released grant no more', async () => {
    const agent = `agent_${randomUUID()}`;
    const held = await ask(agent, 20n, 10_000);
    expect((await ask(agent, 1n, 10_001)).kind).toBe('over');
    if (held.kind !== 'reserved') throw new Error(`not reserved: ${held.kind}`);
    await grants.release(held.grant.id);
    expect((await ask(agent, 20n, 10_002)).kind).toBe('reserved');
  });

  it('holds the cap under concurrent reservations', async () => {
    const agent = `agent_${randomUUID()}`;
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => ask(agent, 3n, 20_000)));
    expect(outcomes.filter((o) => o.kind === 'reserved')).toHaveLength(6);
  });
});
