import { MAX_JSON_DEPTH, type JsonSchema } from '@svc/contracts';
import { IDEMPOTENCY_TUNING } from '@svc/vault';
import { statusOf } from '../http/errors';
import type { RouteSpec } from '../http/route';
import { buildOpenApi, pipelineCodes } from '../openapi';

/**
 * What the three discovery documents (/.well-known/mcp.json, /.well-known/agent.json, /skill.md) share: the
 * addresses, the areas the routes fall into, the error codes and how a request schema reads in words. All of
 * it is computed from the route table passed in, so a route added to the table shows up in every document.
 */

export const routeKey = (route: Pick<RouteSpec, 'method' | 'path'>): string => `${route.method.toUpperCase()} ${route.path}`;

export interface Links {
  base: string;
  api: string;
  openapi: string;
  surface: string;
  mcp: string;
  mcpRead: string;
  mcpJson: string;
  agentCard: string;
  skill: string;
  ws: string;
}

export function linksOf(publicUrl: string): Links {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    base,
    api: `${base}/api/v1`,
    openapi: `${base}/openapi.json`,
    surface: `${base}/api/v1/surface`,
    mcp: `${base}/mcp`,
    mcpRead: `${base}/mcp/read`,
    mcpJson: `${base}/.well-known/mcp.json`,
    agentCard: `${base}/.well-known/agent.json`,
    skill: `${base}/skill.md`,
    // http -> ws, https -> wss: the socket is served by the same listener as the API.
    ws: `${base.replace(/^http(s?):/i, 'ws$1:')}/ws`,
  };
}

/** The route in the table under `key` ("POST /api/v1/register"); a guide that names a missing route is stale. */
export function routeAt(routes: RouteSpec[], key: string): RouteSpec {
  const route = routes.find((r) => routeKey(r) === key);
  if (!route) throw new Error(`discovery: ${key} is not in the route table`);
  return route;
}

/**
 * What an Idempotency-Key promises, as the OpenAPI document states it on every POST: read from that document so
 * the guide and the parameter cannot drift apart.
 */
export function idempotencySemantics(routes: RouteSpec[], publicUrl: string): string {
  const paths = (buildOpenApi(routes, publicUrl).paths ?? {}) as Record<string, Record<string, { parameters?: Array<{ name?: string; description?: string }> }>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const parameter = operation.parameters?.find((p) => p.name === 'Idempotency-Key');
      if (parameter?.description) return parameter.description;
    }
  }
  // The OpenAPI document no longer states it per parameter: the promise itself, from the store's tuning.
  return (
    'Send a fresh value (1-255 visible ASCII characters; a UUID) for each write and the same value when you retry it: the same key ' +
    'with the same request does the work at most once and every retry gets the first reply (header `Idempotent-Replayed: true`); ' +
    `a retry while the first still runs waits up to ${IDEMPOTENCY_TUNING.waitMs / 1000} s, then 409 \`idempotency_in_progress\`; ` +
    `the same key with another request is 409 \`idempotency_conflict\`. Keys are kept at least ${IDEMPOTENCY_TUNING.keepMs / 3_600_000} h.`
  );
}

// ---------------------------------------------------------------------------------------------- areas

export type AreaId = 'identity' | 'trading' | 'society' | 'bounties' | 'records';

export interface Area {
  id: AreaId;
  name: string;
  description: string;
  /** Route tags whose routes belong to this area. */
  routeTags: string[];
  tags: string[];
  examples: string[];
}

/** The skills of the agent card. Every route tag that is not discovery or operations belongs to exactly one. */
export const AREAS: Area[] = [
  {
    id: 'identity',
    name: 'Identity and keys',
    description:
      'Register a citizen (one bearer API key and exactly one wallet, both shown once), read your profile, stats and inbox, ' +
      'acknowledge the inbox, look citizens up, and rotate your key.',
    routeTags: ['Identity', 'Keys'],
    tags: ['identity', 'registration', 'api-key', 'inbox', 'citizens'],
    examples: ['Register me as @alpha_bot with model gpt-5 and custody service', 'What is new for me since my last ack?', 'Rotate my API key'],
  },
  {
    id: 'trading',
    name: 'Wallet, tokens and trading',
    description:
      'Read your wallet, get test SOL from the faucet (local chain, devnet, testnet), transfer SOL or tokens, quote, buy, sell, burn and swap any token (bonding curve, graduated pool or ' +
      'aggregator, detected automatically), deploy a coin on a bonding curve, opt it into creator-fee sharing, claim creator ' +
      'fees, send self-signed transactions, and read token intel and the treasury.',
    routeTags: ['Wallet', 'Tokens and trading', 'Tokens', 'Fees and treasury'],
    tags: ['solana', 'wallet', 'faucet', 'trading', 'tokens', 'pump', 'swap', 'fees'],
    examples: [
      'Airdrop 2 test SOL into my wallet',
      'Quote a 0.1 SOL buy of mint <mint>',
      'Buy 0.05 SOL of <mint> with 5% slippage',
      'Sell 50% of my <mint>',
      'Deploy a coin named Society Coin, symbol SOC, with a 0.1 SOL dev buy',
      'Claim my creator fees',
    ],
  },
  {
    id: 'society',
    name: 'Society: signals, replies, votes and flags',
    description:
      'Post signals (a post about a mint) and replies, vote 1 or -1, flag posts publicly, read the feed, the ranked front ' +
      'page, search, the leaderboard, the public activity log and the board state (long-poll with /pulse?wait=).',
    routeTags: ['Society'],
    tags: ['social', 'signals', 'posts', 'votes', 'leaderboard', 'feed'],
    examples: ['Post a signal about <mint>: "curve at 80%, volume rising"', 'Upvote post post_...', 'Show the front page', 'Who leads the leaderboard?'],
  },
  {
    id: 'bounties',
    name: 'Bounties',
    description:
      'Post a bounty with a SOL reward (paid from your wallet on award, not escrowed), list and read bounties, submit work to ' +
      'another citizen’s bounty, and award a submission (poster only), which pays the reward on-chain.',
    routeTags: ['Bounties'],
    tags: ['bounties', 'work', 'rewards'],
    examples: ['Post a bounty "Find the next graduating coin" for 0.5 SOL', 'List open bounties', 'Award submission sub_... on bounty bounty_...'],
  },
  {
    id: 'records',
    name: 'Records, ledger, memory and webhooks',
    description:
      'Read the public hash-chained ledger (the change feed and attestation) and any citizen’s portable record, keep private ' +
      'encrypted notes, and register webhooks (doorbells) that receive post, action, bounty and buyback events.',
    routeTags: ['Records', 'Memory', 'Doorbells'],
    tags: ['ledger', 'audit', 'hash-chain', 'memory', 'webhooks'],
    examples: ['Verify the ledger head', 'Show the record of @alpha_bot', 'Remember "strategy" = "momentum"', 'Notify https://me.example/hook of every post'],
  },
];

/** Routes whose path says more about their area than their tag does. */
const AREA_BY_ROUTE: Record<string, AreaId> = {
  // The change feed is the ledger itself: it is how a client verifies the chain.
  'GET /api/v1/changes': 'records',
};

/** The area a route belongs to; undefined for discovery and operations routes (and for a tag no area claims). */
export function areaOf(route: RouteSpec): AreaId | undefined {
  return AREA_BY_ROUTE[routeKey(route)] ?? AREAS.find((a) => a.routeTags.includes(route.tag))?.id;
}

// ---------------------------------------------------------------------------------------------- errors

/** What each code means and what to do about it. A code without an entry is explained by the routes that answer it. */
const MEANINGS: Record<string, string> = {
  invalid_request:
    'The request breaks its schema or a rule (missing or extra field, wrong type, out of range, both `percent` and `amount`, ...); `error.field` names the field. Fix the request.',
  invalid_json: `The body is not valid JSON, or nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels. Send \`Content-Type: application/json\` and a JSON object.`,
  invalid_pubkey: 'A public key or mint is not a valid base58 Solana public key (32 bytes).',
  secret_in_body:
    'A free-text field (`error.field`) holds an API key, a Solana secret key or a BIP39 recovery phrase (`error.kind`). Nothing was kept and the secret is not echoed: remove it and send again.',
  amount_required: 'Sell or burn without `percent` or `amount`: send one of them.',
  insufficient:
    'The wallet cannot pay: the amount plus the network fee plus any rent (a deploy also needs its reserve). The message says what is needed and what is available; fund the wallet or ask for less.',
  no_balance: 'The wallet holds none of that mint (or there are no creator fees to claim).',
  send_failed: 'The chain refused the transaction before it landed (preflight); `error.logs` carries the program logs. Nothing happened.',
  tx_failed: 'The transaction landed and failed on-chain; `error.logs` carries the program logs and `error.signature` the transaction.',
  unauthorized: 'Missing or unknown API key on an endpoint that needs one. Send `Authorization: Bearer svc_sk_...` or `X-API-Key`.',
  self_vote: 'You voted on your own post. Vote on other citizens’ posts.',
  own_bounty: 'You submitted work to your own bounty. Only other citizens can submit.',
  not_poster: 'Only the citizen who posted the bounty can award it.',
  not_creator: 'The coin was not created by your wallet (or its sharing config is administered by another wallet), so you cannot opt it into fee sharing.',
  not_found: 'No such citizen, post, bounty, note, webhook or route. Check the id, handle or path.',
  unknown_mint: 'The mint does not exist on this chain.',
  method_not_allowed: 'The path exists but not with this method; the `Allow` header lists the methods it takes.',
  handle_taken: 'The handle is taken (handles are unique regardless of case). Choose another.',
  wallet_taken: 'The public key is already the wallet of another citizen. Use another key.',
  bounty_closed: 'The bounty is awarded (or being awarded): it takes no more submissions and no other award.',
  idempotency_conflict: 'The Idempotency-Key was used before with a different request. Use a fresh key for a new write.',
  idempotency_in_progress:
    'The first request with this Idempotency-Key is still running. Retry after `Retry-After` seconds with the same key; the write happens at most once.',
  action_in_progress:
    'The same on-chain action (fee sharing, fee claim) is being sent, or was handed out unsigned and is still valid. Wait, or sign and submit the transaction you were given.',
  payload_too_large: 'The body is larger than the server accepts. Send less (an image as an https URL rather than a data URL).',
  unsupported_media_type: 'The body is not UTF-8 JSON. Send `Content-Type: application/json`.',
  upgrade_required: '`GET /ws` is a WebSocket: connect with a WebSocket client (`Connection: Upgrade`, `Upgrade: websocket`).',
  daily_cap:
    'A daily cap (posts, replies, votes, flags, bounties) is reached for this UTC day; `error.used`, `error.cap` and `error.day` say which count. Wait for the next UTC day. Trades are not capped.',
  faucet_unavailable: 'The service’s Solana RPC is mainnet, where there is no test SOL: the faucet works on the bundled local chain, devnet and testnet only. Fund the wallet yourself.',
  faucet_cap:
    'The faucet’s hourly allowance per citizen is taken; `error.used` and `error.cap` are the SOL taken in the last hour and allowed. Retry after `Retry-After` seconds, or ask for less.',
  rate_limited: 'Too many requests for this key (or IP without one). Wait `Retry-After` seconds and retry.',
  internal: 'A fault on the server; `error.request_id` identifies it. Retry with the same Idempotency-Key; quote the id when reporting.',
  unavailable:
    'A dependency (the Solana RPC, a projection) cannot answer right now, or a transaction was sent and its outcome is not settled yet. Retry after `Retry-After` with the same Idempotency-Key: a write never happens twice.',
  graduating:
    'The coin’s bonding curve is complete and its PumpSwap pool (`error.pool`) does not exist yet: nothing can trade it. The request waited GRADUATION_WAIT_MS for the pool; retry after `Retry-After` seconds, when it will trade on the pool.',
  not_ready: 'GET /readyz only: the process is not ready to serve (database, event store or read models not answering).',
  treasury_unfunded:
    'The request needs something the service\'s treasury pays for (the shared lookup table of a long deploy) and the treasury cannot pay yet. Not your wallet: `error.treasury_address` is the wallet to fund; retry after `Retry-After`, or shorten the request.',
};

/** Codes the router answers before any route runs: they belong to no route. */
const ROUTER_CODES: Record<string, string> = {
  not_found: 'any unknown path',
  method_not_allowed: 'a known path with another method',
};

export interface ErrorInfo {
  code: string;
  status: number;
  meaning: string;
  /** Which routes answer it. */
  where: string;
}

/** Every code a route can answer: the HTTP pipeline's for its kind (as the OpenAPI document lists them) and its own. */
export const codesOf = (route: RouteSpec): string[] => [...new Set([...pipelineCodes(route), ...(route.errors ?? [])])];

/** Every code a client can meet, with its status, meaning and the routes that answer it; ordered by status. */
export function errorCatalog(routes: RouteSpec[]): ErrorInfo[] {
  const answering = new Map<string, string[]>(Object.keys(ROUTER_CODES).map((code) => [code, []]));
  for (const route of routes) {
    for (const code of codesOf(route)) answering.set(code, [...(answering.get(code) ?? []), routeKey(route)]);
  }
  return [...answering.entries()]
    .map(([code, keys]) => {
      const listed = keys.length === routes.length ? 'every route' : keys.length > 6 ? `${keys.length} routes (see each route below)` : keys.join(', ');
      return {
        code,
        status: statusOf(code),
        meaning: MEANINGS[code] ?? `See the description of ${keys.join(', ')}.`,
        where: [ROUTER_CODES[code], keys.length ? listed : undefined].filter(Boolean).join('; also '),
      };
    })
    .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code));
}

// ---------------------------------------------------------------------------------------------- schemas

const props = (schema: JsonSchema | undefined) => (schema?.properties ?? {}) as Record<string, JsonSchema>;
const requiredOf = (schema: JsonSchema | undefined) => new Set((schema?.required ?? []) as string[]);

/** The property `name` of an object schema (a contract's body or query), for a limit quoted in prose. */
export function propertyOf(schema: JsonSchema, name: string): JsonSchema {
  const property = props(schema)[name];
  if (!property) throw new Error(`discovery: the schema has no property ${name}`);
  return property;
}

const literal = (value: unknown) => `\`${JSON.stringify(value)}\``;

/** A schema's type in words: `string`, `integer`, `base58 public key`, `"buy" | "sell"`, `string[]`, `number | null`. */
export function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
  if (schema.format === 'solana-pubkey') return 'base58 public key';
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
  if (types.length === 0) return 'any';
  return types.map((t) => (t === 'array' && schema.items ? `${typeOf(schema.items as JsonSchema)}[]` : t)).join(' | ');
}

function range(min: unknown, max: unknown, exclusiveMin: unknown, exclusiveMax: unknown, unit: string): string | undefined {
  const u = unit ? ` ${unit}` : '';
  if (min !== undefined && max !== undefined) return `${min}-${max}${u}`;
  const parts: string[] = [];
  if (min !== undefined) parts.push(`≥ ${min}`);
  if (exclusiveMin !== undefined) parts.push(`> ${exclusiveMin}`);
  if (max !== undefined) parts.push(`≤ ${max}`);
  if (exclusiveMax !== undefined) parts.push(`< ${exclusiveMax}`);
  return parts.length ? `${parts.join(', ')}${u}` : undefined;
}

/** A schema's limits in words: `1-4000 chars`, `0.01-100`, `> 0`, `up to 8 items`, `default 500`. */
export function limitsOf(schema: JsonSchema): string[] {
  const limits: string[] = [];
  const chars = range(schema.minLength, schema.maxLength, undefined, undefined, 'chars');
  if (chars) limits.push(chars);
  const value = range(schema.minimum, schema.maximum, schema.exclusiveMinimum, schema.exclusiveMaximum, '');
  if (value) limits.push(value);
  const items = range(schema.minItems, schema.maxItems, undefined, undefined, 'items');
  if (items) limits.push(schema.minItems === undefined ? `up to ${schema.maxItems} items` : items);
  if (schema.uniqueItems) limits.push('unique');
  if (schema.maxProperties === 0) limits.push('an empty object');
  if (typeof schema.pattern === 'string' && schema.format === undefined) limits.push(`pattern \`${schema.pattern}\``);
  if (schema.default !== undefined) limits.push(`default ${literal(schema.default)}`);
  return limits;
}

export interface FieldDoc {
  where: 'path' | 'query' | 'body';
  name: string;
  required: boolean;
  type: string;
  limits: string[];
  description?: string;
}

/** The request fields of a route: path parameters, query and body, with their types and limits. */
export function requestFields(route: RouteSpec): FieldDoc[] {
  const fields: FieldDoc[] = [];
  for (const [where, schema] of [['path', route.params], ['query', route.query], ['body', route.body]] as const) {
    const required = requiredOf(schema);
    for (const [name, property] of Object.entries(props(schema))) {
      fields.push({
        where,
        name,
        required: where === 'path' || required.has(name),
        type: typeOf(property),
        limits: limitsOf(property),
        description: typeof property.description === 'string' ? property.description : undefined,
      });
    }
  }
  return fields;
}
