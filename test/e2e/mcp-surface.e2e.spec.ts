import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RouteSpec } from '../../apps/api/src/http/route';
import { notAnAgentCall } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';
import { airdrop, registerCitizen, type TestCitizen } from '../support/citizens';
import { PNG } from '../support/creatorFees';
import { call, type Reply } from '../support/http';
import { callTool, connectMcp, rpc, SPEC_TOOLS, wordsInPlace, type ToolReply } from '../support/mcp';
import { embeddedService, type EmbeddedService } from '../support/servers';

/** The whole tools/list an authenticated client reads, at most: a model with a small window reads it before anything else. */
const TOOLS_LIST_MAX_BYTES = 32 * 1024;

/**
 * The API's routes with no tool, each with the rule that keeps it out: a route of /api/v1 excluded by mistake shows
 * in the diff. Outside /api/v1 (documents, /mcp, /ws, health, metrics) no route is an agent's call.
 */
const API_ROUTES_WITHOUT_TOOL: Record<string, ReturnType<typeof notAnAgentCall>> = {
  'GET /api/v1/surface': 'discovery',
  'GET /api/v1/media/{sha256}': 'bytes',
};

const routeKey = (route: Pick<RouteSpec, 'method' | 'path'>) => `${route.method.toUpperCase()} ${route.path}`;

describe('MCP: a tool for every route an agent calls, and the public reads it adds', () => {
  let service: EmbeddedService;
  let base: string;
  let alice: TestCitizen;
  let sdk: Client;
  let reader: Client;
  const tool = (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolReply> => callTool(base, client, name, args);
  /** The tool answered what the endpoint answers to the same request, the citizens' words set apart. */
  const same = (result: ToolReply, reply: Reply) => {
    expect(result.isError).toBeUndefined();
    expect(wordsInPlace(result.structuredContent)).toEqual(reply.body);
  };

  beforeAll(async () => {
    service = await embeddedService('mcp_surface');
    base = service.server.url;
    alice = await registerCitizen(base, 'mcps');
    sdk = await connectMcp(base, '/mcp', alice.key);
    reader = await connectMcp(base, '/mcp/read');
  }, 90_000);
  afterAll(async () => {
    await reader?.close();
    await sdk?.close();
    await service?.close();
  });

  it('has a tool for every agent-callable route /api/v1/surface lists, and none for the routes notAnAgentCall names', async () => {
    const surface = (await call(base, 'GET', '/api/v1/surface')).body.routes as Array<{ method: string; path: string }>;
    const documented = (await call(base, 'GET', '/.well-known/mcp.json')).body.tools.full as Array<{ name: string; endpoint: string }>;
    const listed = (await sdk.listTools()).tools.map((t) => t.name);
    expect(documented.map((t) => t.name)).toEqual(listed);
    expect(listed.slice(0, SPEC_TOOLS.length)).toEqual(SPEC_TOOLS);
    expect(new Set(listed).size).toBe(listed.length);

    const table = new Map(routeTable().map((route) => [routeKey(route), route]));
    const excluded: Record<string, ReturnType<typeof notAnAgentCall>> = {};
    for (const { method, path } of surface) {
      const key = `${method} ${path}`;
      const reason = notAnAgentCall(table.get(key)!);
      if (path.startsWith('/api/v1/') && reason) excluded[key] = reason;
      if (!path.startsWith('/api/v1/')) expect([key, reason]).toEqual([key, expect.any(String)]);
      const tools = documented.filter((t) => t.endpoint === key).map((t) => t.name);
      expect([key, tools.length]).toEqual([key, reason ? 0 : 1]);
    }
    expect(excluded).toEqual(API_ROUTES_WITHOUT_TOOL);
    // Every tool calls a route the surface lists.
    expect(documented.filter((t) => !surface.some((r) => `${r.method} ${r.path}` === t.endpoint))).toEqual([]);
  });

  it(`answers an authenticated tools/list in at most ${TOOLS_LIST_MAX_BYTES} bytes, the conventions said once in the instructions`, async () => {
    const message = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) });
    const full = await rpc(`${base}/mcp`, message('tools/list'), { authorization: `Bearer ${alice.key}` });
    expect(full.status).toBe(200);
    expect(full.bytes).toBeLessThanOrEqual(TOOLS_LIST_MAX_BYTES);
    const read = await rpc(`${base}/mcp/read`, message('tools/list'));
    expect(read.bytes).toBeLessThan(full.bytes);

    const tools = full.body.result.tools as Array<{ name: string; description: string }>;
    for (const { name, description } of tools) {
      // One line each: no tool repeats the envelope or the key's header; the instructions say them.
      expect([name, description.includes('\n'), description.includes('Authorization'), description.includes('{ok:false')]).toEqual([name, false, false, false]);
    }
    const instructions = sdk.getInstructions() ?? '';
    for (const convention of ['Authorization: Bearer svc_sk_', 'idempotency_key', '{ok:false, error:{code, message}}', 'unauthorized 401', 'rate_limited 429', '`execute`:']) {
      expect([convention, instructions.includes(convention)]).toEqual([convention, true]);
    }
    expect(reader.getInstructions()).not.toContain('idempotency_key');

    const submit = tools.find((t) => t.name === 'svc_submit')!.description;
    expect(submit).toMatch(/bounty submission/);
    expect(submit).toContain('svc_tx_submit');
  });

  it('reads citizens, coins, posts, a bounty, the leaderboard, the activity log and the attestation as their endpoints answer them', async () => {
    await airdrop(service.server.services.chain.connection, alice.wallet, 2);
    const deployed = await call(base, 'POST', '/api/v1/tokens/deploy', { key: alice.key, body: { name: 'Surface Coin', symbol: 'SRF', image: PNG, dev_buy_sol: 0.01 } });
    expect(deployed.status).toBe(201);
    const posted = await call(base, 'POST', '/api/v1/posts', { key: alice.key, body: { body: 'a post for the tools', mint: deployed.body.mint } });
    expect(posted.status).toBe(201);
    const postId = posted.body.post.id as string;
    const replied = await call(base, 'POST', '/api/v1/posts', { key: alice.key, body: { body: 'a reply', parent_id: postId } });
    expect(replied.status).toBe(201);
    const bounty = await call(base, 'POST', '/api/v1/bounties', { key: alice.key, body: { title: 'Find a coin', body: 'any coin', reward_sol: 0.01 } });
    expect(bounty.status).toBe(201);

    // The first attestation after the writes hashes them (`checked_now`); later ones report them `from_earlier`.
    await call(base, 'GET', '/api/v1/attest');
    // Each on the full profile, with the key, and the public ones on the read profile too, where they answer alike.
    for (const client of [sdk, reader]) {
      same(await tool(client, 'svc_agents', { limit: 5 }), await call(base, 'GET', '/api/v1/agents?limit=5'));
      same(await tool(client, 'svc_agent', { handle: alice.handle }), await call(base, 'GET', `/api/v1/agents/${alice.handle}`));
      same(await tool(client, 'svc_tokens', { limit: 10 }), await call(base, 'GET', '/api/v1/tokens?limit=10'));
      same(await tool(client, 'svc_posts', { mint: deployed.body.mint }), await call(base, 'GET', `/api/v1/posts?mint=${deployed.body.mint}`));
      same(await tool(client, 'svc_post_get', { id: postId }), await call(base, 'GET', `/api/v1/posts/${postId}`));
      same(await tool(client, 'svc_bounty_get', { id: bounty.body.bounty.id }), await call(base, 'GET', `/api/v1/bounties/${bounty.body.bounty.id}`));
      same(await tool(client, 'svc_activity', { limit: 5 }), await call(base, 'GET', '/api/v1/activity?limit=5'));
      same(await tool(client, 'svc_leaderboard'), await call(base, 'GET', '/api/v1/leaderboard'));
      same(await tool(client, 'svc_attest'), await call(base, 'GET', '/api/v1/attest'));
    }
    const missing = await tool(sdk, 'svc_post_get', { id: 'post_01JNOSUCHPOST000000000000' });
    expect([missing.isError, missing.structuredContent]).toEqual([true, (await call(base, 'GET', '/api/v1/posts/post_01JNOSUCHPOST000000000000')).body]);
  });

  it('flags a post: the flag is on the post at once, and HTTP under the same Idempotency-Key replays the tool’s reply', async () => {
    const bob = await registerCitizen(base, 'mcpf');
    const post = (await call(base, 'POST', '/api/v1/posts', { key: bob.key, body: { body: 'flag me' } })).body.post.id as string;
    const key = randomUUID();
    const flagged = await tool(sdk, 'svc_flag', { post_id: post, reason: 'misleading signal', idempotency_key: key });
    expect(flagged.isError).toBeUndefined();
    expect(flagged.structuredContent).toMatchObject({ ok: true, flag: { post_id: post, untrusted_text: { reason: 'misleading signal' } } });
    const replay = await call(base, 'POST', '/api/v1/flags', { key: alice.key, body: { post_id: post, reason: 'misleading signal' }, headers: { 'Idempotency-Key': key } });
    expect([replay.headers.get('idempotent-replayed'), replay.body]).toEqual(['true', wordsInPlace(flagged.structuredContent)]);
    const read = await call(base, 'GET', `/api/v1/posts/${post}`);
    expect(read.body.flags).toEqual([expect.objectContaining({ reason: 'misleading signal', seq: flagged.structuredContent!.flag.seq })]);
  });
});
