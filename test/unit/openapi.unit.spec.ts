import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApi, errorCodesByStatus } from '../../apps/api/src/openapi';
import { isKnownCode, statusOf } from '../../apps/api/src/http/errors';
import { routeTable } from '../../apps/api/src/routes/table';

type Json = Record<string, any>;

describe('the OpenAPI document', () => {
  const routes = routeTable();
  const document = buildOpenApi(routes, 'https://society.example') as Json;
  const responseOf = (response: Json): Json => (response.$ref ? document.components.responses[response.$ref.split('/').pop()] : response);
  /** The envelope's `error` of a refusal: the envelope's own, or the `data` of a JSON-RPC error. */
  const errorObjectOf = (response: Json): Json => {
    const schema = responseOf(response).content['application/json'].schema;
    return schema.properties.jsonrpc ? schema.properties.error.properties.data : schema.properties.error;
  };
  const operations = routes.map((route) => ({ route, name: `${route.method.toUpperCase()} ${route.path}`, operation: document.paths[route.path][route.method] as Json }));

  it('is valid OpenAPI 3.1', async () => {
    // The validator ships ES modules only.
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('gives every route a success response with a schema, JSON unless the route says what it produces', () => {
    expect(operations.filter(({ route }) => route.response === undefined).map(({ name }) => name)).toEqual([]);
    for (const { route, name, operation } of operations) {
      const success = responseOf(operation.responses[String(route.status ?? 200)]);
      if (route.status === 101) {
        expect([name, success['x-frame-schema']]).toEqual([name, route.response]);
        continue;
      }
      expect([name, Object.keys(success.content)]).toEqual([name, route.produces ?? ['application/json']]);
      for (const media of Object.values(success.content) as Json[]) expect([name, media.schema]).toEqual([name, route.response]);
    }
  });

  it('pins error.code, per route and status, to a non-empty list of codes of that status', () => {
    for (const { route, name, operation } of operations) {
      const byStatus = errorCodesByStatus(route);
      // A protocol's own replies take statuses of their own, never one that carries codes.
      const protocol = Object.keys(route.protocolReplies ?? {});
      expect([name, protocol.filter((status) => byStatus.has(Number(status)))]).toEqual([name, []]);
      const documented = Object.keys(operation.responses).filter((status) => Number(status) >= 400 && !protocol.includes(status));
      expect([name, documented.sort()]).toEqual([name, [...byStatus.keys()].map(String).sort()]);
      for (const status of documented) {
        const schema = responseOf(operation.responses[status]).content['application/json'].schema;
        if (route.refusals === 'json-rpc') expect(schema.properties.jsonrpc).toEqual({ const: '2.0' });
        else expect(schema.properties.ok).toEqual({ const: false });
        const codes: string[] = errorObjectOf(operation.responses[status]).properties.code.enum;
        expect([name, status, codes.length > 0]).toEqual([name, status, true]);
        for (const code of codes) {
          // A code missing from the status table would be answered 400 without anyone having decided so.
          expect([name, code, isKnownCode(code)]).toEqual([name, code, true]);
          expect([name, code, statusOf(code)]).toEqual([name, code, Number(status)]);
        }
      }
    }
  });

  it('lists every code a route names in its errors, and the pipeline’s own', () => {
    for (const { route, name, operation } of operations) {
      const codes = Object.entries(operation.responses)
        .filter(([status]) => errorCodesByStatus(route).has(Number(status)))
        .flatMap(([, response]) => errorObjectOf(response as Json).properties.code.enum as string[]);
      for (const code of route.errors ?? []) expect([name, codes]).toEqual([name, expect.arrayContaining([code])]);
      expect([name, codes]).toEqual([name, expect.arrayContaining(['invalid_request', 'rate_limited', 'internal'])]);
      if (route.auth === 'auth') expect([name, codes]).toEqual([name, expect.arrayContaining(['unauthorized'])]);
      if (route.method === 'post' && route.idempotent !== false) {
        expect([name, codes]).toEqual([name, expect.arrayContaining(['idempotency_conflict', 'idempotency_in_progress'])]);
      }
      if (route.method !== 'get') expect([name, codes]).toEqual([name, expect.arrayContaining(['invalid_json', 'payload_too_large', 'unsupported_media_type'])]);
      if (route.conditional) expect([name, Object.keys(operation.responses)]).toEqual([name, expect.arrayContaining(['304'])]);
    }
  });

  // A number without bounds lets 1e309 (Infinity to JSON.parse) or 2^63 through to a hash or a bigint column.
  it('bounds every number a request may carry, and every integer parameter to what a ledger seq or a time in ms can be', () => {
    const unbounded: string[] = [];
    const walk = (schema: Json, at: string, parameter: boolean) => {
      const types = [schema.type ?? []].flat();
      if (types.includes('number') || types.includes('integer')) {
        const finite = (...bounds: unknown[]) => bounds.some((bound) => typeof bound === 'number' && Number.isFinite(bound));
        const enumerated = Array.isArray(schema.enum) && schema.enum.every((value: unknown) => finite(value));
        if (!enumerated && !finite(schema.maximum, schema.exclusiveMaximum)) unbounded.push(`${at}: no maximum`);
        if (!enumerated && !finite(schema.minimum, schema.exclusiveMinimum)) unbounded.push(`${at}: no minimum`);
        if (parameter && types.includes('integer') && !(schema.maximum <= Number.MAX_SAFE_INTEGER)) unbounded.push(`${at}: past 2^53-1`);
      }
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Json)) walk(property, `${at}.${name}`, parameter);
      if (schema.items) walk(schema.items, `${at}[]`, parameter);
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${at}.*`, parameter);
      for (const branch of [...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) walk(branch, at, parameter);
    };
    for (const { name, operation } of operations) {
      for (const parameter of operation.parameters as Json[]) walk(parameter.schema, `${name} ${parameter.in} ${parameter.name}`, true);
      const body = operation.requestBody?.content['application/json'].schema;
      if (body) walk(body, `${name} body`, false);
    }
    expect(unbounded).toEqual([]);
  });

  it('has schemas that compile as JSON Schema 2020-12, the dialect of OpenAPI 3.1', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addFormat('solana-pubkey', true);
    const compiles = (schema: Json) => {
      try {
        ajv.compile(schema);
        return true;
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const media of Object.values((responseOf(response as Json).content ?? {}) as Json)) {
          expect([name, status, compiles(media.schema)]).toEqual([name, status, true]);
        }
      }
      const body = operation.requestBody?.content['application/json'].schema;
      if (body) expect([name, 'body', compiles(body)]).toEqual([name, 'body', true]);
    }
  });
});
