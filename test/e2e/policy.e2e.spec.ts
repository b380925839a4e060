import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { callTool, connectMcp } from '../support/mcp';
import { embeddedService, type EmbeddedService } from '../support/servers';

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const DAY_MS = 86_400_000;
const NO_RULES = { max_sol_per_trade: null, max_sol_per_day: null, allowed_recipients: null, allowed_mints: null };

/** A citizen's spending policy over HTTP and MCP, enforced on real buys and transfers on the bundled chain. */
describe('spending policy: GET/PUT /api/v1/policy, enforced before signing', () => {
  let service: EmbeddedService;
  let base: string;
  let mint: string;
  /** How far the service's clock is ahead of the real one. */
  let ahead = 0;

  beforeAll(async () => {
    service = await embeddedService('policy', {}, { clock: () => Date.now() + ahead, outboxRecoveryEveryMs: 3_600_000 });
    base = service.server.url;
    const creator = await citizen('pdev', 2);
    const deployed = await call(base, 'POST', '/api/v1/tokens/deploy', { key: creator.key, body: { name: 'Policy Coin', symbol: 'PLCY', image: PNG } });
    expect(deployed.status).toBe(201);
    mint = deployed.body.mint;
  }, 120_000);
  afterAll(() => service?.close());

  const connection = () => service.server.services.chain.connection;
  const lamportsOf = async (wallet: string) => BigInt(await connection().getBalance(new PublicKey(wallet), 'confirmed'));
  async function citizen(prefix: string, sol: number, own?: Keypair): Promise<TestCitizen> {
    const made = await registerCitizen(base, prefix, own ? { custody: 'self', public_key: own.publicKey.toBase58() } : {}, own);
    if (sol > 0) await airdrop(connection(), made.wallet, sol);
    return made;
  }
  const put = (who: TestCitizen, policy: Record<string, unknown>) => call(base, 'PUT', '/api/v1/policy', { key: who.key, body: policy });
  const get = (who: TestCitizen) => call(base, 'GET', '/api/v1/policy', { key: who.key });
  const buy = (who: TestCitizen, amountSol: number, more: Record<string, unknown> = {}) =>
    call(base, 'POST', '/api/v1/tokens/buy', { key: who.key, body: { mint, amount_sol: amountSol, priority_fee_sol: 0, ...more } });

  it('50 concurrent 0.1 SOL buys under a 1 SOL/day cap: at most 10 confirm, the rest are 403 policy_limit, and the chain agrees', async () => {
    const alice = await citizen('pday', 20);
    const set = await put(alice, { max_sol_per_day: 1 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ policy: { ...NO_RULES, max_sol_per_day: 1 }, pending: null, ledger: { seq: expect.any(Number) } });
    const before = await lamportsOf(alice.wallet);

    // A wide slippage: the buys all quote the same curve state, and the test is about the cap, not the price.
    const replies = await Promise.all(Array.from({ length: 50 }, () => buy(alice, 0.1, { slippage_bps: 5000 })));

    const confirmed = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status !== 200);
    // Each buy reserves its network fees too: ten would be 1.00005 SOL, so exactly nine fit under the cap.
    expect(confirmed.length).toBe(9);
    expect(confirmed.every((r) => r.body.executed === true)).toBe(true);
    const day = new Date(Date.now() + ahead).toISOString().slice(0, 10);
    for (const r of refused) {
      expect([r.status, r.body.error.code, r.body.error.limit, r.body.error.cap, r.body.error.day]).toEqual([403, 'policy_limit', 'max_sol_per_day', 1, day]);
      expect(r.body.error.used).toBeLessThanOrEqual(1);
    }
    const spent = before - (await lamportsOf(alice.wallet));
    const ataRent = 2_039_280n;
    expect(spent).toBeGreaterThanOrEqual(BigInt(confirmed.length) * BigInt(LAMPORTS_PER_SOL / 10));
    expect(spent - ataRent).toBeLessThanOrEqual(BigInt(LAMPORTS_PER_SOL));
    const shown = await get(alice);
    expect(shown.body.spent_today).toEqual({ day, used_sol: expect.closeTo(confirmed.length * 0.100005, 9) });
  }, 120_000);

  it('a buy that fails before signing frees what it reserved', async () => {
    const bob = await citizen('pfree', 0.3);
    await put(bob, { max_sol_per_day: 1 });
    const failed = await buy(bob, 0.5);
    expect([failed.status, failed.body.error.code]).toEqual([400, 'insufficient']);
    expect((await get(bob)).body.spent_today.used_sol).toBe(0);
  }, 60_000);

  it('a loosening waits for the delay on the service clock, a tightening applies at once, and a pending change can be cancelled', async () => {
    const carol = await citizen('pdelay', 0);
    await put(carol, { max_sol_per_day: 1 });
    const loosened = await put(carol, { max_sol_per_day: 5 });
    const now = Date.now() + ahead;
    expect(loosened.body.policy.max_sol_per_day).toBe(1);
    expect(loosened.body.pending).toEqual({ policy: { ...NO_RULES, max_sol_per_day: 5 }, effective_at: expect.any(Number) });
    expect(loosened.body.pending.effective_at).toBeGreaterThanOrEqual(now - 1_000 + DAY_MS - 60_000);
    expect((await get(carol)).body).toMatchObject({ policy: { max_sol_per_day: 1 }, pending: { effective_at: loosened.body.pending.effective_at } });

    ahead += DAY_MS;
    expect((await get(carol)).body).toMatchObject({ policy: { max_sol_per_day: 5 }, pending: null });

    const tightened = await put(carol, { max_sol_per_day: 0.5, max_sol_per_trade: 0.1 });
    expect(tightened.body).toMatchObject({ policy: { ...NO_RULES, max_sol_per_day: 0.5, max_sol_per_trade: 0.1 }, pending: null });

    await put(carol, { max_sol_per_day: 2, max_sol_per_trade: 0.1 });
    const mixed = await put(carol, { cancel_pending: true, max_sol_per_day: 9 });
    expect([mixed.status, mixed.body.error.code, mixed.body.error.field]).toEqual([400, 'invalid_request', 'max_sol_per_day']);
    const cancelled = await put(carol, { cancel_pending: true });
    expect([cancelled.status, cancelled.body.pending, cancelled.body.policy.max_sol_per_day]).toEqual([200, null, 0.5]);
    const again = await put(carol, { cancel_pending: true });
    expect([again.status, again.body.error.code, again.body.error.field]).toEqual([400, 'invalid_request', 'cancel_pending']);

    const changes = (await call(base, 'GET', `/api/v1/changes?after=${loosened.body.ledger.seq - 1}&limit=100`)).body.changes as Array<{ type: string; actor: string }>;
    expect(changes.filter((c) => c.actor === carol.id).map((c) => c.type)).toEqual(['PolicySet', 'PolicySet', 'PolicySet', 'PolicyChangeCancelled']);
  }, 60_000);

  it('refuses by rule: max_sol_per_trade and allowed_mints on buys, allowed_recipients on transfers', async () => {
    const dave = await citizen('prule', 3);
    const friend = await citizen('pfriend', 0);
    const stranger = await citizen('pstranger', 0);
    await put(dave, { max_sol_per_trade: 0.05 });
    const tooBig = await buy(dave, 0.1);
    expect([tooBig.status, tooBig.body.error]).toEqual([403, expect.objectContaining({ code: 'policy_limit', limit: 'max_sol_per_trade', used: 0.1, cap: 0.05 })]);

    await put(dave, { max_sol_per_trade: 0.05, allowed_mints: [Keypair.generate().publicKey.toBase58()], allowed_recipients: [`@${friend.handle}`] });
    const otherMint = await buy(dave, 0.01);
    expect([otherMint.status, otherMint.body.error.limit, otherMint.body.error.mint]).toEqual([403, 'allowed_mints', mint]);

    const toStranger = await call(base, 'POST', '/api/v1/transfer', { key: dave.key, body: { to: stranger.handle, amount: 0.01 } });
    expect([toStranger.status, toStranger.body.error.limit, toStranger.body.error.recipient]).toEqual([403, 'allowed_recipients', stranger.handle]);
    const toFriend = await call(base, 'POST', '/api/v1/transfer', { key: dave.key, body: { to: friend.wallet, amount: 0.01 } });
    expect([toFriend.status, toFriend.body.executed]).toEqual([200, true]);
    expect(await lamportsOf(stranger.wallet)).toBe(0n);
  }, 60_000);

  it('self custody: the service refuses to build what the policy forbids', async () => {
    const own = Keypair.generate();
    const erin = await citizen('pself', 1, own);
    await put(erin, { max_sol_per_trade: 0.05 });
    const refused = await buy(erin, 0.1, { execute: false });
    expect([refused.status, refused.body.error.limit, refused.body.transaction]).toEqual([403, 'max_sol_per_trade', undefined]);
    const built = await buy(erin, 0.05, { execute: false });
    expect([built.status, built.body.executed, typeof built.body.transaction]).toEqual([200, false, 'string']);
  }, 60_000);

  it('/agents/{handle} shows the policy in force, and svc_policy / svc_policy_set answer as HTTP does', async () => {
    const frank = await citizen('pmcp', 0);
    expect((await call(base, 'GET', `/api/v1/agents/${frank.handle}`)).body.policy).toEqual(NO_RULES);
    const client: Client = await connectMcp(base, '/mcp', frank.key);
    try {
      const set = await callTool(base, client, 'svc_policy_set', { max_sol_per_day: 2, allowed_mints: [mint] });
      expect(set.isError).toBeFalsy();
      const overHttp = await get(frank);
      expect(set.structuredContent).toEqual({ ...overHttp.body, ledger: set.structuredContent!.ledger });
      const read = await callTool(base, client, 'svc_policy');
      expect(read.structuredContent).toEqual(overHttp.body);
    } finally {
      await client.close();
    }
    const profile = await call(base, 'GET', `/api/v1/agents/${frank.handle}`);
    expect(profile.body.policy).toEqual({ ...NO_RULES, max_sol_per_day: 2, allowed_mints: [mint] });
  }, 60_000);
});

describe('spending policy: the operator’s defaults for new citizens', () => {
  let service: EmbeddedService;
  beforeAll(async () => {
    service = await embeddedService('policy-default', { DEFAULT_POLICY_MAX_SOL_PER_TRADE: '0.5', DEFAULT_POLICY_MAX_SOL_PER_DAY: '3' });
  }, 90_000);
  afterAll(() => service?.close());

  it('a citizen registered under DEFAULT_POLICY_* starts with that policy in force, shown to everyone', async () => {
    const base = service.server.url;
    const grace = await registerCitizen(base, 'pdef');
    const expected = { ...NO_RULES, max_sol_per_trade: 0.5, max_sol_per_day: 3 };
    expect((await call(base, 'GET', '/api/v1/policy', { key: grace.key })).body).toMatchObject({ policy: expected, pending: null });
    expect((await call(base, 'GET', `/api/v1/agents/${grace.handle}`)).body.policy).toEqual(expected);
  }, 30_000);
});
