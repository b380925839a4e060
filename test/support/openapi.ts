import { appendFileSync } from 'node:fs';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { isBase58PublicKey, type JsonSchema } from '@svc/contracts';
import { buildOpenApi, errorSchemaFor } from '../../apps/api/src/openapi';
import type { RouteSpec } from '../../apps/api/src/http/route';
import { routeTable } from '../../apps/api/src/routes/table';

/**
 * Every reply a test receives from the service is checked against the OpenAPI document the service serves, so
 * that the document and the behaviour cannot drift apart: the status must be one the operation documents, the
 * content type one it documents for that status, and a JSON body must match that status's schema. Checked more
 * strictly than the document reads: an object whose properties are listed may carry no other property, so a
 * field a route starts to answer is documented before a test passes.
 */

type Responses = Record<string, { $ref?: string; content?: Record<string, { schema?: JsonSchema }> }>;

interface Operation {
  method: string;
  path: string;
  refusals: RouteSpec['refusals'];
  pattern: RegExp;
  responses: Responses;
}

interface Document {
  operations: Operation[];
  components: Responses;
}

let cached: Document | undefined;

/** Like express: `{name}` is one segment, a trailing slash is optional, and letters match in any case. */
function patternOf(template: string): RegExp {
  const escaped = template
    .split(/\{\w+\}/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${escaped}/?$`, 'i');
}

function documentOf(): Document {
  if (!cached) {
    // The routes go in table order, the order express tries them in.
    const built = buildOpenApi(routeTable(), 'http://service.test') as { paths: Record<string, Record<string, { responses: Responses }>>; components: { responses: Responses } };
    const operations = routeTable().map((route) => ({
      method: route.method.toUpperCase(),
      path: route.path,
      refusals: route.refusals,
      pattern: patternOf(route.path),
      responses: built.paths[route.path]![route.method]!.responses,
    }));
    cached = { operations, components: built.components.responses };
  }
  return cached;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addFormat('solana-pubkey', { type: 'string', validate: isBase58PublicKey });
const compiled = new WeakMap<object, ValidateFunction>();

/** The keywords whose values are schemas, or maps or lists of schemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_VALUES = ['items', 'additionalProperties', 'unevaluatedProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames'];

/** The schema with every object that lists its properties closed to others. */
function closed(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  for (const key of SCHEMA_MAPS) {
    if (out[key] && typeof out[key] === 'object') {
      out[key] = Object.fromEntries(Object.entries(out[key] as Record<string, JsonSchema>).map(([name, inner]) => [name, closed(inner)]));
    }
  }
  for (const key of SCHEMA_LISTS) if (Array.isArray(out[key])) out[key] = (out[key] as JsonSchema[]).map(closed);
  for (const key of SCHEMA_VALUES) if (out[key] && typeof out[key] === 'object') out[key] = closed(out[key] as JsonSchema);
  if (out.properties && !('additionalProperties' in out) && !('unevaluatedProperties' in out) && !('patternProperties' in out)) out.additionalProperties = false;
  return out;
}

function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(closed(schema));
    compiled.set(schema, validate);
  }
  return validate;
}

const describeError = (e: ErrorObject) => `  ${e.instancePath || '(body)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`;

class Drift extends Error {
  constructor(method: string, path: string, status: number, why: string, text: string) {
    super(`${method} ${path} answered ${status}, which the OpenAPI document does not describe:\n${why}\nbody: ${text.slice(0, 600)}`);
    this.name = 'OpenApiDrift';
  }
}

function refused(drift: Drift): void {
  // OPENAPI_DRIFT_LOG=<file> surveys a run: every drift is listed in the file, and none fails a test.
  const log = process.env.OPENAPI_DRIFT_LOG;
  if (log) appendFileSync(log, `${drift.message.replace(/\n/g, '\n    ')}\n`);
  else throw drift;
}

const mediaType = (contentType: string | null | undefined) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');

/** What a request that matched no operation of its path may be answered, before or instead of any route. */
const UNROUTED: Record<number, string[]> = {
  400: ['invalid_json', 'invalid_request'],
  405: ['method_not_allowed'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  429: ['rate_limited'],
  500: ['internal'],
};

/**
 * Checks one reply against the document. A path no route has (a deliberate probe of an unknown route) is not
 * checked, nor are HEAD and OPTIONS, which express answers for the routes.
 */
export function checkReply(method: string, url: string, status: number, contentType: string | null | undefined, text: string): void {
  const verb = method.toUpperCase();
  if (verb === 'HEAD' || verb === 'OPTIONS') return;
  const { pathname } = new URL(url);
  const { operations, components } = documentOf();
  const onPath = operations.filter((op) => op.pattern.test(pathname));
  if (onPath.length === 0) return;
  const operation = onPath.find((op) => op.method === verb);
  const name = operation ? `${verb} ${operation.path}` : `${verb} ${pathname}`;
  let response: Responses[string] | undefined;
  if (operation) {
    response = operation.responses[String(status)];
    if (!response) {
      return refused(new Drift(verb, pathname, status, `${name} documents ${Object.keys(operation.responses).join(', ')}`, text));
    }
  } else {
    // A known path with a method it does not take: 405, unless the request was refused before routing.
    const codes = UNROUTED[status];
    if (!codes) return refused(new Drift(verb, pathname, status, `no operation ${name}: expected 405 method_not_allowed`, text));
    const { refusals } = onPath[0]!;
    response = status === 405 && !refusals ? components.MethodNotAllowed! : { content: { 'application/json': { schema: unroutedSchema(codes, refusals) } } };
  }
  if (response.$ref) response = components[response.$ref.replace('#/components/responses/', '')]!;
  const content = response.content;
  if (!content) {
    if (text !== '') refused(new Drift(verb, pathname, status, `${name} documents no body for ${status}`, text));
    return;
  }
  const type = mediaType(contentType);
  const documented = Object.entries(content).find(([key]) => mediaType(key) === type);
  if (!documented) {
    return refused(new Drift(verb, pathname, status, `content type ${type || '(none)'}; documented: ${Object.keys(content).join(', ')}`, text));
  }
  if (!isJson(type)) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refused(new Drift(verb, pathname, status, `the ${type} body is not JSON`, text));
  }
  const validate = validatorOf(documented[1].schema ?? {});
  if (!validate(body)) {
    refused(new Drift(verb, pathname, status, `the body does not match the schema of ${name} ${status}:\n${validate.errors!.map(describeError).join('\n')}`, text));
  }
}

const unrouted = new Map<string, JsonSchema>();
function unroutedSchema(codes: string[], refusals: RouteSpec['refusals']): JsonSchema {
  const key = `${refusals} ${codes.join(' ')}`;
  if (!unrouted.has(key)) unrouted.set(key, errorSchemaFor(codes, refusals));
  return unrouted.get(key)!;
}

/** fetch, with the reply checked like call()'s; the Response is returned unread. */
export async function checkedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  const text = await res.clone().text();
  checkReply(init.method ?? 'GET', url, res.status, res.headers.get('content-type'), text);
  return res;
}
