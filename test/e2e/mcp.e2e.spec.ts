import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import fc from 'fast-check';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { mcpTools, sharedArguments } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { PNG } from '../support/creatorFees';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { callTool, checkToolResult, connectMcp, rpc, SPEC_TOOLS, wordsInPlace, type ToolReply } from '../support/mcp';
import { checkedFetch } from '../support/openapi';

let nextId = 1;
const request = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id: nextId++, method, ...(params ? { params } : {}) });
const INITIALIZE = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'plain-json-rpc', version: '0' } };

describe('MCP: /mcp and /mcp/read', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  let alice: TestCitizen;
  let sdk: Client;

  const connect = (path: string, key?: string) => connectMcp(base, path, key);
  const tool = (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolReply> => callTool(base, client, name, args);

  beforeAll(async () => {
    db = await freshDatabase('mcp');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('mcp'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }));
    base = server.url;
    alice = await registerCitizen(base, 'mcpa');
    await airdrop(server.services.chain.connection, alice.wallet, 3);
    sdk = await connect('/mcp', alice.key);
  }, 90_000);
  afterAll(async () => {
    await sdk?.close();
    await server?.close();
    await db?.drop();
  });

  it('lists the spec’s 27 svc_ tools first, then the others, each with its endpoint request schema and a description', async () => {
    const { tools } = await sdk.listTools();
    expect(tools.slice(0, SPEC_TOOLS.length).map((t) => t.name)).toEqual(SPEC_TOOLS);
    expect(tools.map((t) => t.name)).toEqual(mcpTools(routeTable()).map((t) => t.name));
    const routes = routeTable();
    const shared = sharedArguments(routes);
    const instructions = sdk.getInstructions() ?? '';
    for (const listed of tools) {
      const derived = mcpTools(routes).find((t) => t.name === listed.name)!;
      expect(listed.inputSchema).toEqual(derived.inputSchema);
      expect(listed.description).toContain(`${derived.route.method.toUpperCase()} ${derived.route.path}`);
      // Every field the endpoint takes is an argument of the tool, with the contract's constraints, required alike; a long
      // description several tools share is said once, in the instructions. The validator's own keywords (`x-…`) and the
      // bound of a safe integer are left to the endpoint, which checks them.
      for (const part of [derived.route.params, derived.route.query, derived.route.body]) {
        const fields = (part?.properties ?? {}) as Record<string, { description?: string }>;
        for (const [field, { description, ...all }] of Object.entries(fields)) {
          const constraints = Object.fromEntries(Object.entries(all).filter(([key, value]) => !key.startsWith('x-') && !(key === 'maximum' && value === Number.MAX_SAFE_INTEGER)));
          const said = description !== undefined && shared.get(field) === description;
          expect([listed.name, field, listed.inputSchema.properties?.[field]]).toEqual([listed.name, field, said ? constraints : { description, ...constraints }]);
          if (said) expect([field, instructions.includes(`\`${field}\`: ${description}`)]).toEqual([field, true]);
        }
        const required = part === derived.route.params ? Object.keys(fields) : ((part?.required ?? []) as string[]);
        expect([listed.name, listed.inputSchema.required ?? []]).toEqual([listed.name, expect.arrayContaining(required)]);
      }
    }
  });

  it('answers a public tool, an authenticated read and a write as their HTTP endpoints answer', async () => {
    const front = await tool(sdk, 'svc_front', { limit: 5 });
    expect(front.isError).toBeUndefined();
    expect(wordsInPlace(front.structuredContent)).toEqual((await call(base, 'GET', '/api/v1/front?limit=5')).body);
    // An optional argument sent as null is one left out, as tool callers mean it.
    expect(wordsInPlace((await tool(sdk, 'svc_front', { limit: null })).structuredContent)).toEqual((await call(base, 'GET', '/api/v1/front')).body);
    expect(JSON.parse(front.content[0].text)).toEqual(front.structuredContent);

    const me = await tool(sdk, 'svc_me');
    expect(me.structuredContent).toMatchObject({ ok: true, agent: { handle: alice.handle } });
    expect(wordsInPlace(me.structuredContent)).toEqual((await call(base, 'GET', '/api/v1/me', { key: alice.key })).body);

    // The same Idempotency-Key through HTTP replays the tool's write: one pipeline, one stored reply.
    const key = randomUUID();
    const posted = await tool(sdk, 'svc_post', { body: 'written over MCP', tags: ['mcp'], idempotency_key: key });
    expect(posted.isError).toBeUndefined();
    expect(posted.structuredContent).toMatchObject({ ok: true, post: { untrusted_text: { body: 'written over MCP', tags: ['mcp'] } }, ledger: { seq: expect.any(Number) } });
    const replay = await call(base, 'POST', '/api/v1/posts', { key: alice.key, body: { body: 'written over MCP', tags: ['mcp'] }, headers: { 'Idempotency-Key': key } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(wordsInPlace(posted.structuredContent));
    // Read-your-writes: the post is readable at once, by tool and by HTTP alike.
    const id = posted.structuredContent!.post.id as string;
    expect((await call(base, 'GET', `/api/v1/posts/${id}`)).body).toMatchObject({ ok: true, post: { id } });
    const record = await tool(sdk, 'svc_record', { handle: alice.handle });
    expect(wordsInPlace(record.structuredContent)).toEqual((await call(base, 'GET', `/api/v1/record/${alice.handle}`)).body);
  });

  it('trades against the bundled chain: deploy, quote equal to GET /quote, and a buy that a retry does not repeat', async () => {
    const deployed = await tool(sdk, 'svc_deploy', { name: 'Mcp Coin', symbol: 'MCP', description: 'deployed by a tool', image: PNG, dev_buy_sol: 0.01, idempotency_key: randomUUID() });
    expect([deployed.isError, deployed.structuredContent]).toEqual([undefined, expect.objectContaining({ ok: true, mint: expect.any(String), signature: expect.any(String) })]);
    const mint = deployed.structuredContent!.mint as string;

    const quoted = await tool(sdk, 'svc_quote', { mint, side: 'buy', amount: 0.05 });
    expect(quoted.structuredContent).toEqual((await call(base, 'GET', `/api/v1/quote?mint=${mint}&side=buy&amount=0.05`)).body);

    const key = randomUUID();
    const bought = await tool(sdk, 'svc_buy', { mint, amount_sol: 0.05, idempotency_key: key });
    expect(bought.structuredContent).toMatchObject({ ok: true, signature: expect.any(String) });
    const retried = await tool(sdk, 'svc_buy', { mint, amount_sol: 0.05, idempotency_key: key });
    expect(retried.structuredContent).toEqual(bought.structuredContent);
    expect([(bought as { _meta?: unknown })._meta, (retried as { _meta?: unknown })._meta]).toEqual([undefined, { idempotent_replayed: true }]);
    const replay = await call(base, 'POST', '/api/v1/tokens/buy', { key: alice.key, body: { mint, amount_sol: 0.05 }, headers: { 'Idempotency-Key': key } });
    expect(replay.body).toEqual(bought.structuredContent);

    const wallet = await tool(sdk, 'svc_wallet');
    expect(wallet.structuredContent).toEqual((await call(base, 'GET', '/api/v1/wallet', { key: alice.key })).body);
    const held = (wallet.structuredContent!.holdings as Array<{ mint: string }>).find((h) => h.mint === mint);
    expect(held).toBeDefined();
  });

  it('answers a refusal as a tool error carrying the envelope code, and an unknown tool as a JSON-RPC error', async () => {
    const anonymous = await connect('/mcp');
    try {
      const refused = await tool(anonymous, 'svc_post', { body: 'no key' });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toEqual({ ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
      expect(JSON.parse(refused.content[0].text)).toEqual(refused.structuredContent);
      // Registration needs no key.
      const handle = `mcpr${Date.now().toString(36)}`;
      const registered = await tool(anonymous, 'svc_register', { handle, model: 'm' });
      expect(registered.structuredContent).toMatchObject({ ok: true, api_key: expect.stringMatching(/^svc_sk_/), agent: { handle } });
    } finally {
      await anonymous.close();
    }
    const post = (await tool(sdk, 'svc_post', { body: 'mine' })).structuredContent!.post.id;
    const selfVote = await tool(sdk, 'svc_vote', { post_id: post, value: 1 });
    expect(selfVote).toMatchObject({ isError: true, structuredContent: { ok: false, error: { code: 'self_vote' } } });
    const invalid = await tool(sdk, 'svc_post', { body: '' });
    expect(invalid).toMatchObject({ isError: true, structuredContent: { ok: false, error: { code: 'invalid_request', field: 'body' } } });
    // The client prefixes "MCP error -32602: " once; the server's message does not carry it already.
    await expect(sdk.callTool({ name: 'svc_nope', arguments: {} })).rejects.toThrow(
      new Error('MCP error -32602: unknown tool "svc_nope"; tools/list names them'),
    );
  });

  it('serves a plain JSON-RPC client that accepts only application/json', async () => {
    const url = `${base}/mcp`;
    const init = await rpc(url, request('initialize', INITIALIZE));
    expect(init.status).toBe(200);
    expect(init.contentType).toMatch(/^application\/json/);
    expect(init.body).toMatchObject({ jsonrpc: '2.0', result: { serverInfo: { name: 'agent-trading-society', version: '1.0.0' }, capabilities: { tools: {} } } });
    expect((await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);

    const listed = await rpc(url, request('tools/list'));
    expect(listed.body.result.tools.map((t: { name: string }) => t.name)).toEqual(mcpTools(routeTable()).map((t) => t.name));

    const auth = { authorization: `Bearer ${alice.key}` };
    const me = await rpc(url, request('tools/call', { name: 'svc_me', arguments: {} }), auth);
    expect(wordsInPlace(me.body.result.structuredContent)).toEqual((await call(base, 'GET', '/api/v1/me', { key: alice.key })).body);
    const posted = await rpc(url, request('tools/call', { name: 'svc_post', arguments: { body: 'plain client post' } }), { 'x-api-key': alice.key });
    expect(posted.body.result.structuredContent).toMatchObject({ ok: true, post: { untrusted_text: { body: 'plain client post' } } });
    const search = await rpc(url, request('tools/call', { name: 'svc_search', arguments: { q: 'plain' } }));
    expect(wordsInPlace(search.body.result.structuredContent)).toEqual((await call(base, 'GET', '/api/v1/search?q=plain')).body);
    const unauthorized = await rpc(url, request('tools/call', { name: 'svc_wallet', arguments: {} }), { authorization: 'Bearer svc_sk_made_up' });
    expect(unauthorized.body.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'unauthorized' } } });
  });

  it('answers malformed JSON-RPC with JSON-RPC errors, never a 500', async () => {
    const url = `${base}/mcp`;
    const garbled = await rpc(url, '{"jsonrpc":"2.0",');
    expect([garbled.status, garbled.body.error.code]).toEqual([400, -32700]);
    expect(garbled.body).toMatchObject({ jsonrpc: '2.0', id: null });
    const notRpc = await rpc(url, { hello: 'world' });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error.code).toBeLessThan(0);
    // One message per POST: a batch would spend one request's rate limit on many calls.
    for (const batch of [[1, 2], [], [request('tools/call', { name: 'svc_post', arguments: { body: 'in a batch' } })]]) {
      const refused = await rpc(url, batch, { authorization: `Bearer ${alice.key}` });
      expect([batch, refused.status, refused.body]).toEqual([batch, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('batch') } }]);
    }
    expect((await call(base, 'GET', '/api/v1/search?q=batch')).body.posts ?? []).toEqual([]);
    const trailing = await checkedFetch(`${base}/MCP/`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(await trailing.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, data: { code: 'unsupported_media_type' } } });
    const unknownMethod = await rpc(url, request('resources/list'));
    expect(unknownMethod.body.error.code).toBe(-32601);
    const badParams = await rpc(url, request('tools/call', { name: 'svc_me', arguments: 'nope' }));
    expect(badParams.body.error.code).toBe(-32602);
    const wrongType = await checkedFetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it('serves on /mcp/read only the public reads, and ignores a key there', async () => {
    const reader = await connect('/mcp/read', alice.key);
    try {
      const names = (await reader.listTools()).tools.map((t) => t.name).sort();
      const expected = mcpTools(routeTable()).filter((t) => t.route.method === 'get' && t.route.auth !== 'auth').map((t) => t.name).sort();
      expect(names).toEqual(expected);
      expect(names).toEqual([
        'svc_activity', 'svc_agent', 'svc_agents', 'svc_anchors', 'svc_attest', 'svc_bounties', 'svc_bounty_get', 'svc_candles', 'svc_changes', 'svc_front', 'svc_leaderboard',
        'svc_post_get', 'svc_posts', 'svc_pulse', 'svc_quote', 'svc_record', 'svc_search', 'svc_token', 'svc_tokens', 'svc_treasury',
      ]);
      // A key changes nothing: pulse answers as to a stranger.
      const pulse = await tool(reader, 'svc_pulse');
      expect(pulse.structuredContent).not.toHaveProperty('has_new_for_you');
      expect((await tool(sdk, 'svc_pulse')).structuredContent).toHaveProperty('has_new_for_you');
      await expect(reader.callTool({ name: 'svc_post', arguments: { body: 'not here' } })).rejects.toThrow(/unknown tool/);
      await expect(reader.callTool({ name: 'svc_me', arguments: {} })).rejects.toThrow(/unknown tool/);
    } finally {
      await reader.close();
    }
  });

  it('answers fuzzed arguments to every tool with results or coded tool errors, never a fault', async () => {
    const url = `${base}/mcp`;
    // A rotation that passed would revoke the key every later keyed call sends; mcp-private.e2e calls svc_rotate.
    const tools = mcpTools(routeTable()).filter((t) => t.name !== 'svc_rotate');
    const anything = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant('9'.repeat(400)),
      fc.constant(1e308),
      fc.constant(-1),
      fc.constant('💥\u0000'),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
    );
    const argsOf = (names: string[]) =>
      fc.dictionary(fc.oneof(fc.constantFrom(...names, '__proto__', 'constructor', 'idempotency_key'), fc.string()), anything, { maxKeys: 6 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...tools.map((t) => t.name)), fc.boolean(), fc.integer(), async (name, keyed, seed) => {
        const properties = Object.keys(tools.find((t) => t.name === name)!.inputSchema.properties as object);
        const args = fc.sample(argsOf(properties), { numRuns: 1, seed })[0];
        const reply = await rpc(url, request('tools/call', { name, arguments: args }), keyed ? { authorization: `Bearer ${alice.key}` } : {});
        expect([name, args, reply.status]).toEqual([name, args, 200]);
        const result = reply.body.result;
        expect(result).toBeDefined();
        checkToolResult(base, name, args, result);
        if (result.isError) {
          expect(result.structuredContent).toEqual({ ok: false, error: expect.objectContaining({ code: expect.stringMatching(/^[a-z_]+$/), message: expect.any(String) }) });
          expect([name, args, result.structuredContent.error.code]).not.toEqual([name, args, 'internal']);
        } else {
          expect(result.structuredContent.ok).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});

describe('MCP under the rate limit', () => {
  let db: FreshDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    db = await freshDatabase('mcp_limit');
    // 1 request/s, counted over 10 s: 10 requests, then 429.
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('mcp-limit'), RATE_LIMIT_RPS: '1' }));
  }, 90_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('counts every MCP request, keyed or not, on either profile', async () => {
    const call = (path: string) => rpc(`${server.url}${path}`, request('tools/call', { name: 'svc_treasury', arguments: {} }), { authorization: 'Bearer svc_sk_ignored_here' });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await call(i % 2 ? '/mcp' : '/mcp/read')).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    const limited = await call('/mcp/read');
    expect([limited.status, limited.body.error]).toEqual([429, { code: -32000, message: expect.stringContaining('too many requests'), data: expect.objectContaining({ code: 'rate_limited' }) }]);
  });
});
