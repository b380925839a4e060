import type { RouteSpec } from '../http/route';
import type { SkillSettings } from './markdown';
import { mcpTools } from '../mcp/tools';
import { buildOpenApi, errorCodesByStatus, takesIdempotencyKey } from '../openapi';
import { changesQuery, executeFlag } from '@svc/contracts';
import { propertyOf, requestFields, routeKey, type FieldDoc } from './catalog';
import { bullets, code } from './markdown';

const AUTH_WORDS: Record<RouteSpec['auth'], string> = {
  public: 'public (no key)',
  auth: 'key required',
  optional: 'key optional',
};

/** A request field as the guide lists it: name [where]: type, limits. Description. */
export function fieldLine(field: FieldDoc): string {
  const details = [field.type, ...field.limits].join(', ');
  return `${code(field.name)}${field.required ? ' (required)' : ''} [${field.where}]: ${details}${field.description ? `. ${field.description}` : ''}`;
}

/**
 * A route's entry in its topic page: summary, auth and the rest of its row, its request fields and its error codes.
 * `execute`, shared by every route that signs, is explained once on the custody page and only pointed to here.
 */
export function routeEntry(route: RouteSpec, routes: RouteSpec[], custodyPage: string): string[] {
  const tools = mcpTools(routes, 'full');
  const readTools = new Set(mcpTools(routes, 'read').map((t) => t.name));
  const tool = tools.find((t) => routeKey(t.route) === routeKey(route));
  const notes = [
    AUTH_WORDS[route.auth],
    route.status ? `answers ${route.status}` : undefined,
    takesIdempotencyKey(route) ? 'takes `Idempotency-Key`' : undefined,
    route.conditional ? 'sends an `ETag`; `If-None-Match` → 304' : undefined,
    tool ? `MCP tool ${code(tool.name)}${readTools.has(tool.name) ? ' (also on /mcp/read)' : ''}` : undefined,
  ].filter(Boolean);
  const out = [`#### ${code(routeKey(route))}`, '', `${route.summary.replace(/\.$/, '')}. (${notes.join('; ')})`, ''];
  if (route.description) out.push(route.description, '');
  const body = (route.body?.properties ?? {}) as Record<string, unknown>;
  const fields = requestFields(route).map((field) =>
    field.where === 'body' && body[field.name] === executeFlag ? fieldLine({ ...field, description: `sign and send, or hand out unsigned: see ${custodyPage}` }) : fieldLine(field),
  );
  if (fields.length) out.push(...bullets(fields), '');
  const refusals = [...errorCodesByStatus(route)].map(([status, codes]) => `${status} ${codes.map((c) => code(c)).join(', ')}`);
  out.push(`Errors: ${refusals.join('; ')}.`, '');
  return out;
}

/** A program that re-verifies the whole chain from the public entries alone, as the guide shows it. */
export function verifyChainSample(base: string): string[] {
  return [
      "import { createHash } from 'node:crypto';",
      "import canonicalize from 'canonicalize'; // RFC 8785 (JCS)",
      "let prev = '0'.repeat(64), count = 0, after = -1;",
      'for (;;) {',
      `  const page = await (await fetch(\`${base}/api/v1/changes?after=\${after}&limit=${propertyOf(changesQuery, 'limit').maximum}\`)).json();`,
      '  for (const e of page.changes) {',
      "    if (e.seq !== count || e.prev !== prev) throw new Error(`chain broken at ${e.seq}`);",
      "    const hash = createHash('sha256').update(prev + '\\n' + canonicalize({ seq: e.seq, type: e.type, at: e.at, actor: e.actor, data: e.data })).digest('hex');",
      "    if (hash !== e.hash) throw new Error(`bad hash at ${e.seq}`);",
      '    prev = hash; count += 1;',
      '  }',
      '  if (!page.has_more) break;',
      '  after = page.next_after;',
      '}',
      `const attest = await (await fetch('${base}/api/v1/attest')).json(); // attest.head === prev && attest.length === count, unless entries were added meanwhile`
  ];
}

/** One entry of a citizen's record checked against Solana: hashed forward to its anchor, then the anchor's memo read from an RPC. */
export function verifyAnchorSample(base: string): string[] {
  return [
    '// save as check.mjs beside node_modules/canonicalize, then: node check.mjs <handle> <solana rpc url>',
    "import { createHash } from 'node:crypto';",
    "import canonicalize from 'canonicalize';",
    'const [handle, rpc] = process.argv.slice(-2);',
    `const get = async (path) => (await fetch(\`${base}\${path}\`)).json();`,
    'const { events } = await get(`/api/v1/record/${handle}`);',
    'const entry = events.find((e) => e.anchor); // the first of your entries an anchor covers',
    'const { anchor } = entry;',
    'let prev = entry.prev, after = entry.seq - 1;',
    'while (after < anchor.seq) {',
    '  const { changes } = await get(`/api/v1/changes?after=${after}&limit=1000`);',
    '  for (const e of changes.filter((c) => c.seq <= anchor.seq)) {',
    "    if (e.seq !== after + 1 || e.prev !== prev) throw new Error(`chain broken at ${e.seq}`);",
    "    prev = createHash('sha256').update(prev + '\\n' + canonicalize({ seq: e.seq, type: e.type, at: e.at, actor: e.actor, data: e.data })).digest('hex');",
    '    after = e.seq;',
    '  }',
    '}',
    "const call = async (method, params) => (await (await fetch(rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()).result;",
    "const tx = await call('getTransaction', [anchor.signature, { encoding: 'jsonParsed', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]);",
    "const memo = tx.transaction.message.instructions.find((ix) => ix.program === 'spl-memo')?.parsed;",
    'const signer = tx.transaction.message.accountKeys.find((k) => k.signer).pubkey;',
    "const treasury = (await get('/api/v1/agents/treasury')).agent.wallet;",
    'if (tx.meta.err !== null || memo !== `svc-ledger:v1:${anchor.seq}:${prev}` || signer !== treasury) throw new Error(`anchor ${anchor.signature} does not commit to this history`);',
    'console.log(`entry ${entry.seq} is in the history Solana holds since slot ${tx.slot}`);',
  ];
}

/** The conventions the OpenAPI document states where the specification says "not shown", reused as written there. */
export function openApiConventions(routes: RouteSpec[], settings: SkillSettings): string[] {
  const info = buildOpenApi(routes, settings.publicUrl, settings).info as { description?: string } | undefined;
  return (info?.description ?? '')
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2));
}

