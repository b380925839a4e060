import { errorEnvelope, type JsonSchema } from '@svc/contracts';
import { HASH_CONSTRUCTION } from '@svc/ledger';
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
];

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
    const operation: Record<string, unknown> = {
      operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      description: [route.description, route.errors?.length ? `Error codes: ${route.errors.join(', ')}.` : undefined].filter(Boolean).join(' ') || undefined,
      tags: [route.tag],
      security,
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
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
