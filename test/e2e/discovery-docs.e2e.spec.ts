import { executeFlag } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { statusOf } from '../../apps/api/src/http/errors';
import type { RouteSpec } from '../../apps/api/src/http/route';
import { mcpTools } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';

const PUBLIC_URL = 'https://society.example';

/** The spec's MCP tool names ("Discovery and tooling"), each mapping to the endpoint of the same name. */
const SPEC_TOOLS = [
  'register', 'me', 'wallet', 'pulse', 'front', 'search', 'token', 'quote', 'deploy', 'buy', 'sell', 'burn', 'swap', 'transfer',
  'post', 'vote', 'bounty_create', 'bounties', 'submit', 'award', 'memory_set', 'memory_get', 'treasury', 'fee_share', 'ack',
  'changes', 'record',
].map((name) => `svc_${name}`);

/** The codes the HTTP pipeline and the router answer on top of the routes' own `errors`. */
const COMMON_CODES = [
  'invalid_request', 'invalid_json', 'unsupported_media_type', 'payload_too_large', 'unauthorized', 'not_found',
  'method_not_allowed', 'idempotency_conflict', 'idempotency_in_progress', 'rate_limited', 'internal',
];

/** The spec's agent card fields. */
const CARD_FIELDS = [
  'name', 'description', 'url', 'version', 'documentationUrl', 'capabilities', 'authentication', 'defaultInputModes',
  'defaultOutputModes', 'interfaces', 'skills',
];

/** The guide's topic pages (issue 25: the reference moved off /skill.md). */
const TOPICS = ['custody', 'trading', 'society', 'bounties', 'realtime', 'mcp', 'ledger', 'errors', 'reference'];

const key = (route: Pick<RouteSpec, 'method' | 'path'>) => `${route.method.toUpperCase()} ${route.path}`;
const INFRASTRUCTURE = new Set(['Discovery', 'Operations']);

describe('discovery documents: mcp.json, agent.json, skill.md and its topic pages', () => {
  let db: FreshDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    db = await freshDatabase('discovery_docs');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, DATA_DIR: tempDir('discovery-docs'), PUBLIC_URL }));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('serves /.well-known/mcp.json with both endpoints and the tools of both profiles', async () => {
    const res = await call(server.url, 'GET', '/.well-known/mcp.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = res.body;
    // A discovery document, not an API reply.
    expect(doc).not.toHaveProperty('ok');
    expect(doc.endpoints.full.url).toBe(`${PUBLIC_URL}/mcp`);
    expect(doc.endpoints.read.url).toBe(`${PUBLIC_URL}/mcp/read`);
    expect(doc.transport).toMatchObject({ type: 'streamable-http', stateless: true });
    expect(doc.transport.accept).toContain('Accept: application/json');
    expect(doc.protocol).toEqual({ name: 'JSON-RPC', version: '2.0', methods: ['initialize', 'tools/list', 'tools/call'] });
    expect(JSON.stringify(doc.authentication)).toContain('Authorization: Bearer svc_sk_');
    expect(JSON.stringify(doc.authentication)).toContain('X-API-Key');
    expect(doc.idempotency.argument).toBe('idempotency_key');

    const full = doc.tools.full as Array<{ name: string; inputSchema: { type: string }; description: string; endpoint: string }>;
    // The spec's names, and a tool for every other route an agent calls (issue 25).
    const expected = mcpTools(routeTable(), 'full');
    expect(full.map((t) => t.name)).toEqual(expected.map((t) => t.name));
    expect(full.map((t) => t.name)).toEqual(expect.arrayContaining(SPEC_TOOLS));
    for (const tool of expected) {
      const listed = full.find((t) => t.name === tool.name)!;
      expect(listed.inputSchema).toEqual(tool.inputSchema);
      expect(listed.inputSchema.type).toBe('object');
      expect(listed.description.length).toBeGreaterThan(0);
      expect(listed.endpoint).toBe(key(tool.route));
    }

    // The read profile: exactly the tools whose endpoint is a GET that needs no key, per the route table.
    const byKey = new Map(routeTable().map((route) => [key(route), route]));
    const readExpected = full.filter((t) => {
      const route = byKey.get(t.endpoint)!;
      return route.method === 'get' && route.auth !== 'auth';
    });
    // Named only: a tool reads the same on both profiles.
    const read = doc.tools.read as string[];
    expect(read).toEqual(readExpected.map((t) => t.name));
    expect(read.length).toBeGreaterThan(0);
    // Write tools take the idempotency argument; read tools do not.
    expect(doc.idempotency.tools).toContain('svc_buy');
    expect(doc.idempotency.tools).not.toContain('svc_quote');
  });

  it('lists in mcp.json exactly what tools/list answers on /mcp and /mcp/read', async () => {
    const doc = (await call(server.url, 'GET', '/.well-known/mcp.json')).body;
    for (const [profile, path] of [['full', '/mcp'], ['read', '/mcp/read']] as const) {
      // A plain JSON-RPC client, as the document says one may be: `Accept: application/json` only.
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(200);
      const listed = ((await res.json()) as { result: { tools: Array<{ name: string; description: string; inputSchema: unknown }> } }).result.tools;
      const full = doc.tools.full as Array<{ name: string; description: string; inputSchema: unknown }>;
      const documented = profile === 'full' ? full : full.filter((t) => (doc.tools.read as string[]).includes(t.name));
      expect(documented.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))).toEqual(
        listed.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      );
    }
  });

  it('serves an A2A agent card with every field the spec lists, its interfaces and one skill per area', async () => {
    const res = await call(server.url, 'GET', '/.well-known/agent.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const card = res.body;
    for (const field of CARD_FIELDS) expect(card).toHaveProperty(field);
    expect(card).not.toHaveProperty('ok');
    expect(card.version).toBe('1.0.0');
    expect(card.url).toBe(PUBLIC_URL);
    expect([`${PUBLIC_URL}/skill.md`, `${PUBLIC_URL}/openapi.json`]).toContain(card.documentationUrl);
    expect(card.capabilities).toMatchObject({ streaming: false, pushNotifications: true, stateTransitionHistory: true });
    expect(card.authentication.schemes).toEqual(expect.arrayContaining(['bearer', 'apiKey']));
    expect(JSON.stringify(card.authentication)).toContain('/api/v1/register');
    expect(card.defaultInputModes).toContain('application/json');
    expect(card.defaultOutputModes).toContain('application/json');

    const interfaces = card.interfaces as Array<Record<string, any>>;
    const byTransport = (t: string) => interfaces.find((i) => i.transport === t);
    expect(byTransport('HTTP+JSON')).toMatchObject({ openapi: `${PUBLIC_URL}/openapi.json` });
    expect(byTransport('MCP')).toMatchObject({ url: `${PUBLIC_URL}/mcp`, readOnlyUrl: `${PUBLIC_URL}/mcp/read` });
    expect(byTransport('WebSocket')).toMatchObject({ url: 'wss://society.example/ws' });

    // The guide: the quick start and every topic page, and each skill's page.
    expect(card.guides.quickStart).toBe(`${PUBLIC_URL}/skill.md`);
    expect(card.guides.topics.map((t: { url: string }) => t.url)).toEqual(TOPICS.map((topic) => `${PUBLIC_URL}/skill/${topic}.md`));
    for (const skill of card.skills) expect(card.guides.topics.map((t: { url: string }) => t.url)).toContain(skill.documentationUrl);

    const skills = card.skills as Array<{ id: string; name: string; description: string; tags: string[]; routes: Array<{ method: string; path: string }>; tools: string[] }>;
    expect(skills.map((s) => s.id).sort()).toEqual(['bounties', 'identity', 'records', 'society', 'trading']);
    for (const skill of skills) {
      expect(skill.name.length).toBeGreaterThan(0);
      expect(skill.description.length).toBeGreaterThan(0);
      expect(skill.tags.length).toBeGreaterThan(0);
    }
    // Every MCP tool is in exactly one skill.
    for (const tool of mcpTools(routeTable(), 'full')) {
      expect([tool.name, skills.filter((s) => s.tools.includes(tool.name)).length]).toEqual([tool.name, 1]);
    }
    // Every route that acts in the service is in exactly one skill; discovery and operations routes in none.
    for (const route of routeTable()) {
      const holders = skills.filter((s) => s.routes.some((r) => `${r.method} ${r.path}` === key(route)));
      expect([key(route), holders.length]).toEqual([key(route), INFRASTRUCTURE.has(route.tag) ? 0 : 1]);
    }
  });

  /** Every page of the guide: /skill.md and the topic pages it links, by path. */
  async function guidePages(): Promise<Map<string, string>> {
    const res = await call(server.url, 'GET', '/skill.md');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown; charset=utf-8/i);
    const pages = new Map<string, string>([['/skill.md', res.body as string]]);
    const linked = [...(res.body as string).matchAll(/\]\(https:\/\/society\.example(\/skill\/[a-z]+\.md)\)/g)].map((m) => m[1]!);
    for (const path of new Set(linked)) {
      const page = await call(server.url, 'GET', path);
      expect([path, page.status]).toEqual([path, 200]);
      expect(page.headers.get('content-type')).toMatch(/^text\/markdown; charset=utf-8/i);
      pages.set(path, page.body as string);
    }
    return pages;
  }

  it('links a topic page for each of custody, trading, society, bounties, realtime, mcp, ledger, errors and reference', async () => {
    const pages = await guidePages();
    expect([...pages.keys()].sort()).toEqual(
      ['/skill.md', ...TOPICS.map((topic) => `/skill/${topic}.md`)].sort(),
    );
    const missing = await call(server.url, 'GET', '/skill/nonsense.md');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('documents every route once, with its fields, on the topic pages, and every tool and error code', async () => {
    const pages = await guidePages();
    const topics = [...pages].filter(([path]) => path !== '/skill.md');
    const text = topics.map(([, page]) => page).join('\n');
    const routes = routeTable();
    for (const tool of SPEC_TOOLS) expect([tool, pages.get('/skill/mcp.md')!.includes(tool)]).toEqual([tool, true]);

    // Every code a client can meet, in the errors table with its HTTP status.
    const errors = pages.get('/skill/errors.md')!;
    const codes = new Set([...COMMON_CODES, ...routes.flatMap((route) => route.errors ?? [])]);
    for (const code of codes) {
      expect([code, errors.includes(`| ${statusOf(code)} | \`${code}\` |`)]).toEqual([code, true]);
    }

    // Each route has its entry, with its request fields, on exactly one page, and the reference's index points there.
    const reference = pages.get('/skill/reference.md')!;
    for (const route of routes) {
      const heading = `#### \`${key(route)}\``;
      const holders = topics.filter(([, page]) => page.includes(`${heading}\n`));
      expect([key(route), holders.length]).toEqual([key(route), 1]);
      const [path, page] = holders[0]!;
      expect([key(route), reference.includes(`| \`${key(route)}\` | [${path.slice('/skill/'.length, -'.md'.length)}](`)]).toEqual([key(route), true]);
      const start = page.indexOf(heading);
      const next = page.indexOf('\n#### ', start + 1);
      const entry = page.slice(start, next === -1 ? undefined : next);
      for (const schema of [route.params, route.query, route.body]) {
        for (const field of Object.keys((schema?.properties ?? {}) as object)) {
          expect([key(route), field, entry.includes(`\`${field}\``)]).toEqual([key(route), field, true]);
        }
      }
    }

    // What `execute` does is said once, on the custody page; the routes that take it point there.
    const executeText = (executeFlag.description as string).slice(0, 80);
    expect(topics.filter(([, page]) => page.includes(executeText)).map(([path]) => path)).toEqual(['/skill/custody.md']);

    for (const needle of [
      HASH_CONSTRUCTION,
      'Idempotency-Key',
      'idempotency_key',
      'If-None-Match',
      'wait=25',
      'wss://society.example/ws',
      '{"kind":"ping"}',
      '?since=',
      `${PUBLIC_URL}/mcp/read`,
      'Authorization: Bearer svc_sk_',
      'X-API-Key',
      'secret_key',
      '/api/v1/rotate',
      '"execute": false',
      '/api/v1/tx/submit',
      '/api/v1/attest',
    ]) {
      expect([needle, text.includes(needle)]).toEqual([needle, true]);
    }
  });
});
