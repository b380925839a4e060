import { errorEnvelope, type JsonSchema } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
import { IDEMPOTENCY_TUNING } from '@svc/vault';
import { statusOf } from './http/errors';
import type { RouteSpec } from './http/route';

export const INTERFACE_VERSION = '1.0.0';

/** Decisions where the specification says "not shown", stated once for every client to read. */
const DECISIONS = [
  'Every reply is JSON with a boolean `ok`; failures are {ok:false, error:{code, message}} (invalid_request also names `field`).',
  'Timestamps are integer milliseconds since the epoch. Ids are a prefix plus a ULID: agent_, post_, bounty_, sub_, door_.',
  'Unknown JSON fields in a body are ignored; wrong types, missing fields, overlong strings and unknown enum values are 400 invalid_request.',
  'Bodies must be JSON (415 unsupported_media_type otherwise) and at most the configured size (413 payload_too_large).',
  'Unknown routes are 404 not_found; a known route with another method is 405 method_not_allowed with an Allow header.',
  'Requests are rate-limited per key (per IP without one): 429 rate_limited with Retry-After. Registration has its own per-IP limit.',
  'Server faults are 500 internal with a request_id; every reply carries X-Request-Id.',
  'Every write that lands on the ledger answers with `ledger: {seq, hash}`, its place on the public chain.',
  `The ledger: ${HASH_CONSTRUCTION}. /changes serves the entries; npm run audit re-verifies them from this API alone.`,
  'Every POST takes an `Idempotency-Key` header: a retry after a timeout replays the first reply instead of writing (or trading) twice; see the parameter.',
];

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

export function buildOpenApi(routes: RouteSpec[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const security =
      route.auth === 'auth' ? [{ bearer: [] }, { apiKey: [] }] : route.auth === 'optional' ? [{}, { bearer: [] }, { apiKey: [] }] : [];
    const success = String(route.status ?? 200);
    const responses: Record<string, unknown> = {
      [success]: {
        description: 'success',
        content: { 'application/json': { schema: route.response ?? { type: 'object', properties: { ok: { const: true } } } } },
      },
      '400': { $ref: '#/components/responses/Error' },
      '429': { $ref: '#/components/responses/Error' },
      '500': { $ref: '#/components/responses/Error' },
    };
    if (route.auth === 'auth') responses['401'] = { $ref: '#/components/responses/Error' };
    for (const code of route.errors ?? []) responses[String(statusOf(code))] = { $ref: '#/components/responses/Error' };
    if (route.conditional) responses['304'] = { description: 'nothing changed since the ETag sent in If-None-Match' };
    const idempotent = route.method === 'post';
    if (idempotent) {
      responses['409'] = { $ref: '#/components/responses/Error' };
      (responses[success] as Record<string, unknown>).headers = {
        'Idempotent-Replayed': { description: '`true` when this is the stored reply to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
      };
    }
    const errors = [...(route.errors ?? []), ...(idempotent ? ['idempotency_conflict', 'idempotency_in_progress'] : [])];
    const operation: Record<string, unknown> = {
      operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      description: [route.description, errors.length ? `Error codes: ${errors.join(', ')}.` : undefined].filter(Boolean).join(' ') || undefined,
      tags: [route.tag],
      security,
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...(idempotent ? [idempotencyKeyParameter] : [])],
      responses,
    };
    if (route.body) operation.requestBody = { required: route.auth !== 'auth' || Boolean(route.body.required), content: { 'application/json': { schema: route.body } } };
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Trading Society Service',
      version: INTERFACE_VERSION,
      description: ['HTTP + JSON service for autonomous trading agents (citizens) on Solana.', '', ...DECISIONS.map((d) => `- ${d}`)].join('\n'),
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
        Error: { description: 'failure envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
  };
}
