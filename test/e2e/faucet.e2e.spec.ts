import { randomUUID } from 'node:crypto';
import { LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { MAINNET_GENESIS_HASH } from '@svc/chain';
import { registerCitizen, type TestCitizen } from '../support/citizens';
import { call } from '../support/http';
import { callTool, connectMcp, wordsInPlace } from '../support/mcp';
import { rpcError, rpcResult, withRpcProxy } from '../support/rpcProxy';
import { embeddedService, type EmbeddedService } from '../support/servers';

describe('POST /api/v1/faucet: test SOL into the caller’s wallet', () => {
  let service: EmbeddedService;
  let base: string;
  /** How far the service's clock is ahead of the real one. */
  let ahead = 0;

  beforeAll(async () => {
    service = await embeddedService('faucet', {}, { clock: () => Date.now() + ahead });
    base = service.server.url;
  }, 90_000);
  afterAll(() => service?.close());

  const connection = () => service.server.services.chain.connection;
  const lamportsOf = async (wallet: string) => connection().getBalance(new PublicKey(wallet), 'confirmed');
  const faucet = (who: TestCitizen, body: unknown = {}, headers: Record<string, string> = {}) => call(base, 'POST', '/api/v1/faucet', { key: who.key, body, headers });
  const faucetEntries = async (who: TestCitizen) => {
    const { body } = await call(base, 'GET', '/api/v1/activity?limit=200');
    return (body.actions as Array<{ agent: { id: string }; action: string }>).filter((a) => a.agent.id === who.id && a.action === 'faucet');
  };

  it('airdrops 2 SOL by default, confirmed before the reply, with the new balance the chain agrees with, and shows it in /activity', async () => {
    const alice = await registerCitizen(base, 'fct');
    const res = await faucet(alice);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, signature: expect.any(String), sol: 2, wallet: alice.wallet, balance_sol: 2, ledger: { seq: expect.any(Number), hash: expect.any(String) } });
    expect(await lamportsOf(alice.wallet)).toBe(2 * LAMPORTS_PER_SOL);
    const landed = await connection().getSignatureStatus(res.body.signature, { searchTransactionHistory: true });
    expect(landed.value).toMatchObject({ err: null, confirmationStatus: expect.stringMatching(/confirmed|finalized/) });

    const shown = await faucetEntries(alice);
    expect(shown).toEqual([
      expect.objectContaining({ seq: res.body.ledger.seq, hash: res.body.ledger.hash, signature: res.body.signature, wallet: alice.wallet, action: 'faucet', details: { sol: 2 } }),
    ]);
    const change = (await call(base, 'GET', `/api/v1/changes?after=${res.body.ledger.seq - 1}&limit=1`)).body.changes[0];
    expect(change).toMatchObject({ seq: res.body.ledger.seq, type: 'ActionRecorded', data: { action: 'faucet', signature: res.body.signature } });
  });

  it('gives up to 10 SOL a request and refuses other amounts and fields with the field named', async () => {
    const bob = await registerCitizen(base, 'fct');
    const ten = await faucet(bob, { sol: 10 });
    expect([ten.status, ten.body.sol, ten.body.balance_sol]).toEqual([200, 10, 10]);
    for (const [body, field] of [
      [{ sol: 10.5 }, 'sol'],
      [{ sol: 0 }, 'sol'],
      // Less than a lamport would be an airdrop of nothing.
      [{ sol: 1e-12 }, 'sol'],
      [{ sol: -1 }, 'sol'],
      [{ sol: '2' }, 'sol'],
      [{ sol: 1, to: 'someone' }, 'to'],
    ] as const) {
      const refused = await faucet(bob, body);
      expect([JSON.stringify(body), refused.status, refused.body.error.code, refused.body.error.field]).toEqual([JSON.stringify(body), 400, 'invalid_request', field]);
    }
    expect(await lamportsOf(bob.wallet)).toBe(10 * LAMPORTS_PER_SOL);
  });

  it('is listed in /api/v1/surface, /openapi.json and the agent card', async () => {
    const surface = await call(base, 'GET', '/api/v1/surface');
    expect(surface.body.routes).toContainEqual({ method: 'POST', path: '/api/v1/faucet', auth: 'auth', summary: expect.stringContaining('faucet') });
    const openapi = await call(base, 'GET', '/openapi.json');
    expect(openapi.body.paths['/api/v1/faucet'].post).toMatchObject({ tags: ['Wallet'], summary: expect.stringContaining('faucet') });
    expect(Object.keys(openapi.body.paths['/api/v1/faucet'].post.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429', '503']));
    const card = await call(base, 'GET', '/.well-known/agent.json');
    expect(JSON.stringify(card.body.skills)).toContain('faucet');
  });

  it('needs an API key', async () => {
    const res = await call(base, 'POST', '/api/v1/faucet', { body: {} });
    expect([res.status, res.body.error.code]).toEqual([401, 'unauthorized']);
  });

  it('airdrops once for retries with the same Idempotency-Key, concurrent or later, and they all get the first reply', async () => {
    const carol = await registerCitizen(base, 'fct');
    const key = randomUUID();
    const replies = await Promise.all(Array.from({ length: 5 }, () => faucet(carol, { sol: 1.5 }, { 'Idempotency-Key': key })));
    const later = await faucet(carol, { sol: 1.5 }, { 'Idempotency-Key': key });
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    for (const reply of [...replies, later]) expect([reply.status, reply.body]).toEqual([200, replies[0]!.body]);
    expect(await lamportsOf(carol.wallet)).toBe(1.5 * LAMPORTS_PER_SOL);
    expect(await faucetEntries(carol)).toHaveLength(1);
  });

  it('answers a retry under the same key, after a 503 that came once the airdrop landed, from that airdrop', async () => {
    const ivy = await registerCitizen(base, 'fct');
    const key = randomUUID();
    const lost = await withRpcProxy(
      service.server.services,
      (raw) => (raw.includes('"getBalance"') ? { status: 503, body: 'no healthy upstream' } : undefined),
      () => faucet(ivy, { sol: 4 }, { 'Idempotency-Key': key }),
    );
    expect([lost.status, lost.body.error.code]).toEqual([503, 'unavailable']);
    const retried = await faucet(ivy, { sol: 4 }, { 'Idempotency-Key': key });
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.body).toMatchObject({ sol: 4, balance_sol: 4 });
    const entries = await faucetEntries(ivy);
    expect(entries).toEqual([expect.objectContaining({ signature: retried.body.signature, seq: retried.body.ledger.seq })]);
    expect(await lamportsOf(ivy.wallet)).toBe(4 * LAMPORTS_PER_SOL);
  });

  it('is the MCP tool svc_faucet, whose result is the HTTP reply', async () => {
    const dave = await registerCitizen(base, 'fct');
    const client = await connectMcp(base, '/mcp', dave.key);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'svc_faucet')?.description).toContain('POST /api/v1/faucet');
      const key = randomUUID();
      const result = await callTool(base, client, 'svc_faucet', { sol: 3, idempotency_key: key });
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toEqual({ ok: true, signature: expect.any(String), sol: 3, wallet: dave.wallet, balance_sol: 3, ledger: { seq: expect.any(Number), hash: expect.any(String) } });
      // The same key over HTTP is the same write: its reply is the tool's result, and nothing more arrives.
      const http = await faucet(dave, { sol: 3 }, { 'Idempotency-Key': key });
      expect(http.body).toEqual(wordsInPlace(result.structuredContent));
      expect(Object.keys(http.body).sort()).toEqual(Object.keys((await faucet(dave, { sol: 1 })).body).sort());
      expect(await lamportsOf(dave.wallet)).toBe(4 * LAMPORTS_PER_SOL);
    } finally {
      await client.close();
    }
  });

  it('refuses on mainnet, known by the RPC’s genesis hash, and airdrops nothing', async () => {
    const erin = await registerCitizen(base, 'fct');
    const asked: string[] = [];
    const res = await withRpcProxy(
      service.server.services,
      (raw) => {
        asked.push(JSON.parse(raw).method);
        return raw.includes('"getGenesisHash"') ? rpcResult(raw, MAINNET_GENESIS_HASH) : undefined;
      },
      async () => [await faucet(erin), await faucet(erin, { sol: 1 })],
    );
    for (const refused of res) {
      expect([refused.status, refused.body.error.code]).toEqual([403, 'faucet_unavailable']);
      expect(refused.body.error.message).toMatch(/only for test clusters/);
    }
    // The genesis hash is asked once and remembered; no airdrop was ever asked for.
    expect(asked.filter((m) => m === 'getGenesisHash')).toHaveLength(1);
    expect(asked).not.toContain('requestAirdrop');
    expect(await lamportsOf(erin.wallet)).toBe(0);
    expect(await faucetEntries(erin)).toEqual([]);
  });

  it('answers 503 with Retry-After when the cluster’s faucet refuses, records nothing and spends none of the allowance', async () => {
    const frank = await registerCitizen(base, 'fct');
    const refused = await withRpcProxy(
      service.server.services,
      (raw) => (raw.includes('"requestAirdrop"') ? rpcError(raw, -32603, 'Internal error: airdrop request failed. This can happen when the rate limit is reached.') : undefined),
      () => faucet(frank, { sol: 10 }),
    );
    expect([refused.status, refused.body.error.code, refused.headers.get('retry-after')]).toEqual([503, 'unavailable', '60']);
    expect(refused.body.error.message).toMatch(/faucet refused the airdrop .*rate limit/);
    expect(await faucetEntries(frank)).toEqual([]);
    // The whole hourly allowance (20 SOL) is still there.
    for (const sol of [10, 10]) expect((await faucet(frank, { sol })).status).toBe(200);
    expect(await lamportsOf(frank.wallet)).toBe(20 * LAMPORTS_PER_SOL);
  });

  it('gives at most FAUCET_SOL_PER_HOUR in a rolling hour: 429 faucet_cap with used, cap and Retry-After, free again as grants age out', async () => {
    const gina = await registerCitizen(base, 'fct');
    const first = await faucet(gina, { sol: 10 });
    ahead += 600_000;
    const second = await faucet(gina, { sol: 10 });
    expect([first.status, second.status]).toEqual([200, 200]);

    const over = await faucet(gina, { sol: 2 });
    expect([over.status, over.body.error.code, over.body.error.used, over.body.error.cap]).toEqual([429, 'faucet_cap', 20, 20]);
    expect(over.body.error.message).toMatch(/hourly faucet cap reached: 20 SOL per citizen per rolling hour/);
    // 2 SOL fits once the first grant is an hour old: 50 minutes from now.
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(2990);
    expect(retryAfter).toBeLessThanOrEqual(3000);

    ahead += 3_000_000 - 1000;
    expect((await faucet(gina, { sol: 2 })).status).toBe(429);
    ahead += 2000;
    const freed = await faucet(gina, { sol: 2 });
    expect([freed.status, freed.body.balance_sol]).toEqual([200, 22]);
    // The second grant and this one hold 12 of the 20: 8 more fit, 9 do not.
    expect((await faucet(gina, { sol: 9 })).body.error).toMatchObject({ code: 'faucet_cap', used: 12, cap: 20 });
    expect((await faucet(gina, { sol: 8 })).status).toBe(200);
    expect(await lamportsOf(gina.wallet)).toBe(30 * LAMPORTS_PER_SOL);
  });

  it('holds the hourly cap under concurrency: 10 concurrent requests of 5 SOL give 20 SOL', async () => {
    const hal = await registerCitizen(base, 'fct');
    const replies = await Promise.all(Array.from({ length: 10 }, () => faucet(hal, { sol: 5 })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
    for (const refused of replies.filter((r) => r.status === 429)) expect(refused.body.error).toMatchObject({ code: 'faucet_cap', used: 20, cap: 20 });
    expect(await lamportsOf(hal.wallet)).toBe(20 * LAMPORTS_PER_SOL);
    expect(await faucetEntries(hal)).toHaveLength(4);
  });
});
