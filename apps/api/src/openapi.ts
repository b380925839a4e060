import { errorEnvelope, MAX_JSON_DEPTH, REFUSES_SECRETS, type JsonSchema } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
import { IDEMPOTENCY_TUNING } from '@svc/vault';
import { statusOf } from './http/errors';
import { takesIdempotencyKey, type RouteSpec } from './http/route';

export const INTERFACE_VERSION = '1.0.0';

/** The request limits of a deployment, stated in the document when the server that serves it knows them. */
export interface DocumentedLimits {
  requestsPerSecond: number;
  registerPerIpPerHour: number;
  bodyLimit: string;
}

/** Decisions where the specification says "not shown", stated once for every client to read. */
function decisions(limits: DocumentedLimits | undefined): string[] {
  const rate = limits
    ? ` (here ${limits.requestsPerSecond} requests/s per key or IP, averaged over 10 s; ${limits.registerPerIpPerHour} registrations per IP per hour)`
    : '';
  return [
    'Every reply of /api/v1 is JSON with a boolean `ok`; failures are {ok:false, error:{code, message}} (invalid_request also names `field`). ' +
      'Each operation lists, per HTTP status, exactly the codes it can answer with. The documents in standard formats (this one, ' +
      '/.well-known/*, /skill.md, Prometheus /metrics, the JSON-RPC replies of /mcp) and hosted media keep their own formats.',
    'Timestamps are integer milliseconds since the epoch. Ids are a prefix plus a ULID: agent_, post_, bounty_, sub_, door_.',
    'Unknown JSON fields in a body are ignored unless the body schema says `additionalProperties: false` (trade bodies do: a typo there is refused); wrong types, missing fields, overlong strings and unknown enum values are 400 invalid_request.',
    `Bodies must be JSON (415 unsupported_media_type otherwise) and at most ${limits ? limits.bodyLimit : 'the configured size'} (413 payload_too_large), with arrays and objects nested at most ${MAX_JSON_DEPTH} levels deep (400 invalid_json).`,
    'Unknown routes are 404 not_found; a known route with another method is 405 method_not_allowed with an Allow header.',
    `Requests are rate-limited per key (per IP without one)${rate}: 429 rate_limited with Retry-After. Registration has its own per-IP limit.`,
    'Server faults are 500 internal with a request_id; every reply carries X-Request-Id. While the database does not answer, or the read models cannot catch up with a read-your-writes read, the answer is 503 unavailable with Retry-After.',
    'Every write that lands on the ledger answers with `ledger: {seq, hash}`, its place on the public chain.',
    `The ledger: ${HASH_CONSTRUCTION}. /changes serves the entries; npm run audit re-verifies them from this API alone.`,
    'Every POST takes an `Idempotency-Key` header: a retry after a timeout replays the first reply instead of writing (or trading) twice; see the parameter.',
    `Versioning: this is version ${INTERFACE_VERSION} of the interface. Within /api/v1 a change only adds (a field, an error code, a route); ` +
      'clients ignore fields they do not know. Removing or changing the meaning of anything would come under a new prefix.',
  ];
}

/**
 * The retry promise, on every POST: a client that timed out cannot tell whether its write happened, and
 * resending must never buy twice.
 */
const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: [
    'Makes this write safe to retry. Send a fresh value (1-255 visible ASCII characters; a UUID is best) for each write you mean to make, and the same value when you retry it.',
    'The same key with the same request (method, path and body, compared as canonical JSON) does the work at most once: every retry gets the first reply, status and body, with the header `Idempotent-Replayed: true`.',
    `A retry that arrives while the first request is still running waits for it (up to ${IDEMPOTENCY_TUNING.waitMs / 1000} s; after that 409 \`idempotency_in_progress\` with Retry-After: retry again).`,
    `If the process serving the first request died, a retry after its ${IDEMPOTENCY_TUNING.leaseMs / 1000} s lease runs it again; an on-chain command then resumes the transaction it recorded for this key instead of sending a second one, so a timed-out buy retried with its key never buys twice, and a post, bounty or submission that the first attempt already wrote is answered as it was written (every attempt proposes the same ids).`,
    'Refusals (4xx) are kept like successes; server errors (5xx) are not, so a retry with the same key runs again, in the same way as after a crash.',
    `The same key with another request is 409 \`idempotency_conflict\`. Keys are kept at least ${IDEMPOTENCY_TUNING.keepMs / 3_600_000} h, per citizen; unauthenticated POSTs such as /register share one public scope, so send an unguessable key (a UUID) there.`,
  ].join(' '),
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]{1,255}$' },
};

const ifNoneMatchParameter = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'the ETag of an earlier reply: while it still matches, the answer is 304 with no body',
  schema: { type: 'string' },
};

const etagHeader = { description: 'names what the body holds; send it back as If-None-Match', schema: { type: 'string' } };
const retryAfterHeader = { description: 'seconds to wait before retrying', schema: { type: 'string', pattern: '^[0-9]+$' } };

export { takesIdempotencyKey };

/** Whether some field of the schema says `has`: one of the `solana-pubkey` format, one that refuses secrets. */
function hasField(schema: unknown, has: (field: JsonSchema) => boolean): boolean {
  if (Array.isArray(schema)) return schema.some((inner) => hasField(inner, has));
  if (schema === null || typeof schema !== 'object') return false;
  return has(schema as JsonSchema) || Object.values(schema).some((inner) => hasField(inner, has));
}

const isPublicKey = (field: JsonSchema) => field.format === 'solana-pubkey';
const refusesSecret = (field: JsonSchema) => field[REFUSES_SECRETS] === true;

/**
 * The codes any route of this kind can answer, beyond its own `errors`: the HTTP pipeline's. A malformed query
 * or path is invalid_request anywhere (invalid_pubkey where a field is a public key); a body's free text that holds
 * a key or a recovery phrase is secret_in_body; a body (which express reads on any POST or DELETE) can be malformed, too large or not JSON; a key is checked on `auth` routes; a POST holds
 * its Idempotency-Key; and any request can be rate-limited, meet a fault, or find the database away (503
 * unavailable with Retry-After).
 */
export function pipelineCodes(route: RouteSpec): string[] {
  const codes = ['invalid_request', 'rate_limited', 'internal', 'unavailable'];
  if ([route.body, route.query, route.params].some((schema) => hasField(schema, isPublicKey))) codes.push('invalid_pubkey');
  if (hasField(route.body, refusesSecret)) codes.push('secret_in_body');
  if (route.method !== 'get') codes.push('invalid_json', 'unsupported_media_type', 'payload_too_large');
  if (route.auth === 'auth') codes.push('unauthorized');
  if (takesIdempotencyKey(route)) codes.push('idempotency_conflict', 'idempotency_in_progress');
  return codes;
}

/** Every code the route can answer, by the HTTP status it comes with: statuses ascending, codes sorted. */
export function errorCodesByStatus(route: RouteSpec): Map<number, string[]> {
  const byStatus = new Map<number, Set<string>>();
  for (const code of [...pipelineCodes(route), ...(route.errors ?? [])]) {
    const status = statusOf(code);
    const codes = byStatus.get(status) ?? new Set<string>();
    codes.add(code);
    byStatus.set(status, codes);
  }
  return new Map([...byStatus.entries()].sort(([a], [b]) => a - b).map(([status, codes]) => [status, [...codes].sort()]));
}

/** The envelope's `error` with its `code` pinned to the codes one status of one route can carry. */
function errorObjectFor(codes: string[]): JsonSchema {
  const error = (errorEnvelope.properties as Record<string, JsonSchema>).error!;
  return { ...error, properties: { ...(error.properties as Record<string, JsonSchema>), code: { type: 'string', enum: codes } } };
}

/**
 * A refusal with `error.code` pinned to the given codes: the envelope, or for a route that speaks JSON-RPC the
 * JSON-RPC error that carries the envelope's `error` as its `data` (absent from the errors the MCP transport
 * itself answers, such as -32700 for a body that is no JSON-RPC message).
 */
export function errorSchemaFor(codes: string[], refusals?: RouteSpec['refusals']): JsonSchema {
  if (refusals === 'json-rpc') {
    return {
      type: 'object',
      required: ['jsonrpc', 'id', 'error'],
      description: 'a JSON-RPC 2.0 error',
      properties: {
        jsonrpc: { const: '2.0' },
        id: { type: ['string', 'integer', 'null'] },
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'integer', description: '-32700 unreadable JSON, -32600 a request the endpoint cannot take, -32000 any other refusal' },
            message: { type: 'string' },
            data: { ...errorObjectFor(codes), description: 'the envelope’s `error`, as the HTTP endpoints answer it' },
          },
        },
      },
    };
  }
  return { ...errorEnvelope, properties: { ...(errorEnvelope.properties as Record<string, JsonSchema>), error: errorObjectFor(codes) } };
}

function errorResponse(status: number, codes: string[], refusals: RouteSpec['refusals']): { description: string; headers?: Record<string, unknown>; content: Record<string, unknown> } {
  return {
    description: `refused${refusals === 'json-rpc' ? ' (a JSON-RPC error)' : ''}: ${codes.map((c) => `\`${c}\``).join(', ')}`,
    ...(status === 429 || status === 503 || codes.includes('idempotency_in_progress') ? { headers: { 'Retry-After': retryAfterHeader } } : {}),
    content: { 'application/json': { schema: errorSchemaFor(codes, refusals) } },
  };
}

/** The one name a set of codes gets under components.responses, so that routes refused alike share it. */
const errorResponseName = (status: number, codes: string[], refusals: RouteSpec['refusals']) =>
  `${refusals === 'json-rpc' ? 'JsonRpcError' : 'Error'}${status}.${codes.join('.')}`;

function parameters(schema: JsonSchema | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    description: property.description,
    schema: property,
  }));
}

const operationIdOf = (route: RouteSpec) =>
  `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;

function successResponse(route: RouteSpec): Record<string, unknown> {
  const schema = route.response ?? { type: 'object', required: ['ok'], properties: { ok: { const: true } } };
  const headers: Record<string, unknown> = {};
  if (takesIdempotencyKey(route)) {
    headers['Idempotent-Replayed'] = {
      description: '`true` when this is the stored reply to an earlier request with the same Idempotency-Key',
      schema: { type: 'string', enum: ['true'] },
    };
  }
  if (route.conditional) headers.ETag = etagHeader;
  if (route.status === 101) {
    // A WebSocket: after the handshake the messages are frames, which OpenAPI has no place for.
    return { description: 'Switching Protocols: the connection is a WebSocket; each text frame is the JSON of `x-frame-schema`', 'x-frame-schema': schema };
  }
  return {
    description: 'success',
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: Object.fromEntries((route.produces ?? ['application/json']).map((type) => [type, { schema }])),
  };
}

export function buildOpenApi(routes: RouteSpec[], serverUrl: string, limits?: DocumentedLimits): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorResponses: Record<string, unknown> = {};
  for (const route of routes) {
    const security =
      route.auth === 'auth' ? [{ bearer: [] }, { apiKey: [] }] : route.auth === 'optional' ? [{}, { bearer: [] }, { apiKey: [] }] : [];
    const responses: Record<string, unknown> = { [String(route.status ?? 200)]: successResponse(route) };
    if (route.conditional) responses['304'] = { description: 'nothing changed since the ETag sent in If-None-Match; no body', headers: { ETag: etagHeader } };
    const byStatus = errorCodesByStatus(route);
    for (const [status, codes] of byStatus) {
      const name = errorResponseName(status, codes, route.refusals);
      errorResponses[name] ??= errorResponse(status, codes, route.refusals);
      responses[String(status)] = { $ref: `#/components/responses/${name}` };
    }
    for (const [status, reply] of Object.entries(route.protocolReplies ?? {})) {
      responses[status] = { description: reply.description, ...(reply.schema ? { content: { 'application/json': { schema: reply.schema } } } : {}) };
    }
    const own = route.errors ?? [];
    const operation: Record<string, unknown> = {
      operationId: operationIdOf(route),
      summary: route.summary,
      description: [route.description, own.length ? `Error codes of this route: ${own.join(', ')}.` : undefined].filter(Boolean).join(' ') || undefined,
      tags: [route.tag],
      security,
      parameters: [
        ...parameters(route.params, 'path'),
        ...parameters(route.query, 'query'),
        ...(takesIdempotencyKey(route) ? [idempotencyKeyParameter] : []),
        ...(route.conditional ? [ifNoneMatchParameter] : []),
      ],
      responses,
    };
    const body = route.body ?? route.ownBody;
    if (body) operation.requestBody = { required: route.auth !== 'auth' || Boolean(body.required), content: { 'application/json': { schema: body } } };
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Trading Society Service',
      version: INTERFACE_VERSION,
      description: ['HTTP + JSON service for autonomous trading agents (citizens) on Solana.', '', ...decisions(limits).map((d) => `- ${d}`)].join('\n'),
    },
    servers: [{ url: serverUrl }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer svc_sk_...' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: { Error: errorEnvelope },
      responses: {
        ...errorResponses,
        // Answered to a method no operation of the path has, so it belongs to no operation.
        MethodNotAllowed: {
          description: 'the path exists, but not with this method; the Allow header lists the methods it takes',
          headers: { Allow: { description: 'the methods of the path', schema: { type: 'string' } } },
          content: { 'application/json': { schema: errorSchemaFor(['method_not_allowed']) } },
        },
        NotFound: {
          description: 'no route has this path',
          content: { 'application/json': { schema: errorSchemaFor(['not_found']) } },
        },
      },
    },
  };
}
