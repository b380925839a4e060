import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import bs58 from 'bs58';
import { Keypair, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { bodyValidator, MAX_JSON_DEPTH, type JsonSchema } from '@svc/contracts';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { statusOf } from '../../apps/api/src/http/errors';
import type { RouteSpec } from '../../apps/api/src/http/route';
import { mcpTools, type McpProfile } from '../../apps/api/src/mcp/tools';
import { routeTable } from '../../apps/api/src/routes/table';
import { airdrop } from '../support/citizens';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call } from '../support/http';
import { wordsInPlace } from '../support/mcp';
import { checkedFetch, checkReply } from '../support/openapi';

const typesOf = (schema: JsonSchema) => [schema.type ?? []].flat() as string[];
const isNumeric = (schema: JsonSchema) => typesOf(schema).some((type) => type === 'number' || type === 'integer');
const propertiesOf = (schema: JsonSchema | undefined) => Object.entries((schema?.properties ?? {}) as Record<string, JsonSchema>);

/** Values tried, in turn, for an argument a request needs besides the one under test. */
const SAMPLE_VALUES: unknown[] = ['So11111111111111111111111111111111111111112', `post_${'0'.repeat(26)}`, 'sub_0', 'https://example.com/a', 'fuzzer', 1, true, [], {}];

/** A value the property takes: the first of its enum, its default, its bounds and the samples that it accepts. */
function sampleOf(property: JsonSchema): unknown {
  const fits = bodyValidator({ type: 'object', required: ['value'], properties: { value: property } });
  const candidates = [...((property.enum as unknown[]) ?? []), property.default, property.minimum, ...SAMPLE_VALUES];
  const found = candidates.find((candidate) => candidate !== undefined && fits({ value: structuredClone(candidate) }) === null);
  if (found === undefined) throw new Error(`no sample value fits ${JSON.stringify(property)}`);
  return found;
}

/** The required properties of a schema, each with a value it takes. */
function requiredSamples(schema: JsonSchema | undefined): Record<string, unknown> {
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.fromEntries(propertiesOf(schema).filter(([name]) => required.has(name)).map(([name, property]) => [name, sampleOf(property)]));
}

/** Every numeric field of a body schema, as the path to it (an array by its first item). */
function numericPaths(schema: JsonSchema, at: (string | number)[] = []): (string | number)[][] {
  const here = isNumeric(schema) ? [at] : [];
  const inside = propertiesOf(schema).flatMap(([name, property]) => numericPaths(property, [...at, name]));
  const items = schema.items ? numericPaths(schema.items as JsonSchema, [...at, 0]) : [];
  return [...here, ...inside, ...items];
}

/** JSON text of `value` with `number` written where it holds PLACEHOLDER: JSON.stringify writes Infinity as null. */
const PLACEHOLDER = '<the number>';
const withNumber = (value: unknown, number: string) => JSON.stringify(value).replace(JSON.stringify(PLACEHOLDER), number);

/** A body of the schema's required fields, holding PLACEHOLDER at `path`. */
function bodyAt(schema: JsonSchema, path: (string | number)[]): unknown {
  const [first, ...rest] = path as [string, ...(string | number)[]];
  const inner = rest.reduceRight<unknown>((value, step) => (typeof step === 'number' ? [value] : { [step]: value }), PLACEHOLDER);
  return { ...requiredSamples(schema), [first]: inner };
}

/**
 * Random input at every route of the table, so a route is fuzzed the day it lands: JSON and hostile raw text
 * (deep nesting, huge numbers, odd Unicode, prototype keys), wrong content types and non-decimal numeric
 * query parameters. Whatever arrives, the answer is one the OpenAPI document describes, and never a 500.
 */
describe('every route under random input', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let key: string;
  let wallet: Keypair;
  /** A transfer the fuzzer's wallet signed, whose bytes the trading bodies mutate. */
  let signedTransfer: Buffer;

  beforeAll(async () => {
    db = await freshDatabase('fuzz');
    server = await startEmbedded(testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('fuzz') }));
    const registered = (await call(server.url, 'POST', '/api/v1/register', { body: { handle: 'fuzzer', model: 'm' } })).body;
    key = registered.api_key;
    // Funded, so that random transfers and submissions get past the balance checks into signing and sending.
    wallet = Keypair.fromSecretKey(bs58.decode(registered.wallet.secret_key));
    const connection = server.services.chain.connection;
    await airdrop(connection, wallet.publicKey.toBase58(), 5);
    const { blockhash } = await connection.getLatestBlockhash();
    const transfer = SystemProgram.transfer({ fromPubkey: wallet.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 });
    const tx = new VersionedTransaction(new TransactionMessage({ payerKey: wallet.publicKey, recentBlockhash: blockhash, instructions: [transfer] }).compileToV0Message());
    tx.sign([wallet]);
    signedTransfer = Buffer.from(tx.serialize());
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  const deepUnder = (levels: number) => `{"handle":"fuzzer","model":"m","body":"b","extra":${nested(levels)}}`;

  it.each(['/api/v1/register', '/api/v1/posts', '/api/v1/votes', '/api/v1/memory', '/api/v1/doorbell', '/api/v1/me/ack'])(
    'refuses a body nested 5,000 levels at %s as invalid_json, naming the limit',
    async (path) => {
      for (const raw of [nested(5_000), deepUnder(5_000)]) {
        const res = await call(server.url, 'POST', path, { raw, key, headers: { 'content-type': 'application/json' } });
        expect([res.status, res.body.error.code]).toEqual([400, 'invalid_json']);
        expect(res.body.error.message).toContain(String(MAX_JSON_DEPTH));
      }
    },
  );

  it('takes a body nested exactly to the limit past the parser', async () => {
    const res = await call(server.url, 'POST', '/api/v1/register', { raw: `{"handle":"!","model":"m","extra":${nested(MAX_JSON_DEPTH - 1)}}`, headers: { 'content-type': 'application/json' } });
    expect([res.status, res.body.error.code, res.body.error.field]).toEqual([400, 'invalid_request', 'handle']);
  });

  it.each(['/mcp', '/mcp/read'])('answers a deeply nested message to %s with a JSON-RPC parse error', async (path) => {
    const res = await call(server.url, 'POST', path, { raw: nested(5_000), key, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    expect([res.status, res.body.error.code, res.body.error.data.code]).toEqual([400, -32700, 'invalid_json']);
  });

  it.each(['0x10', '1e1', ' 5', '0b1', 'Infinity'])('refuses /pulse?wait=%j as invalid_request on wait, before holding anything', async (wait) => {
    const res = await call(server.url, 'GET', `/api/v1/pulse?wait=${encodeURIComponent(wait)}`);
    expect([res.status, res.body.error.code, res.body.error.field]).toEqual([400, 'invalid_request', 'wait']);
  });

  const text = fc.oneof(
    fc.string(),
    fc.fullUnicodeString({ maxLength: 40 }),
    fc.constantFrom('', '0', '-1', '200', '1e309', 'null', 'true', '[]', '{}', '%00', '\u0000', 'a\u0000b', 'agent_x', 'fuzzer'),
  );
  const query = fc.dictionary(fc.constantFrom('limit', 'before', 'since', 'after', 'full', 'q', 'x', 'limit[]', 'mint', 'side', 'amount', 'slippage_bps'), text, { maxKeys: 4 });
  const someMint = fc.oneof(text, fc.constantFrom('So11111111111111111111111111111111111111112', SystemProgram.programId.toBase58(), new PublicKey(new Uint8Array(32).fill(9)).toBase58()));
  const someNumber = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, 1e-9, 0.01, 100, 100.01, 1e20), text);
  const body = fc.oneof(
    fc.jsonValue(),
    fc.record({ handle: fc.jsonValue(), model: fc.jsonValue(), custody: fc.jsonValue(), public_key: fc.jsonValue(), at: fc.jsonValue() }, { requiredKeys: [] }),
    fc.record({ handle: fc.stringMatching(/^[A-Za-z0-9_-]{0,33}$/), model: fc.string({ maxLength: 120 }), bio: fc.string({ maxLength: 450 }) }, { requiredKeys: [] }),
    fc.record({ handle: fc.stringMatching(/^[A-Za-z0-9_-]{2,20}$/), model: text, bio: text, at: fc.double() }, { requiredKeys: [] }),
    // Transfers and submissions: keys, amounts and transactions that are almost right.
    fc.record(
      {
        to: fc.oneof(text, fc.constantFrom('fuzzer', SystemProgram.programId.toBase58(), 'So11111111111111111111111111111111111111112', new PublicKey(new Uint8Array(32).fill(7)).toBase58())),
        amount: fc.oneof(fc.double(), fc.integer(), fc.constantFrom(1e-9, 1e-10, 0.001, 1e20, 18446744073.709551615), text),
        mint: fc.oneof(text, fc.constantFrom('So11111111111111111111111111111111111111112', SystemProgram.programId.toBase58())),
        memo: text,
        execute: fc.oneof(fc.boolean(), fc.jsonValue()),
        transaction: fc.oneof(
          text,
          fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('base64')),
          fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 3 }).map((flips) => {
            const bytes = Buffer.from(signedTransfer);
            for (const [at, value] of flips) bytes[at % bytes.length] = value;
            return bytes.toString('base64');
          }),
        ),
        simulate_only: fc.oneof(fc.boolean(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    ),
  );
  // Trades and deploys: mints, percents, amounts and images that are almost right.
  const trade = fc.record(
    {
      mint: someMint,
      input_mint: someMint,
      output_mint: someMint,
      amount_sol: someNumber,
      amount: someNumber,
      percent: someNumber,
      slippage_bps: someNumber,
      priority_fee_sol: someNumber,
      close_token_account: fc.oneof(fc.boolean(), fc.jsonValue()),
      name: text,
      symbol: text,
      image: fc.oneof(text, fc.constantFrom('data:image/png;base64,', 'data:image/png;base64,iVBORw0KGgo=', 'https://10.0.0.1/a.png', 'http://x/a.png')),
      dev_buy_sol: someNumber,
      mayhem: fc.oneof(fc.boolean(), fc.jsonValue()),
      holder_reward: fc.oneof(fc.boolean(), fc.jsonValue()),
      fee_share: fc.oneof(fc.boolean(), fc.jsonValue()),
      metadata_uri: text,
      execute: fc.oneof(fc.boolean(), fc.jsonValue()),
    },
    { requiredKeys: [] },
  );
  // Path segments as a client might send them raw: malformed %-escapes included.
  const segment = fc.oneof(
    fc.string({ maxLength: 30 }).map((p) => encodeURIComponent(p) || 'x'),
    fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%C0%AF', '..', '%2F', 'a%20b'),
  );
  const encoding = fc.constantFrom(undefined, undefined, undefined, 'gzip', 'br', 'deflate', 'identity', 'x-unknown');
  const raw = fc.oneof(fc.string(), fc.constantFrom('{', '{"a":', 'nul', '\u0000', '[1,', '"x"', '1'));

  // What JSON.stringify cannot write, so these go as raw text: nesting far past the limit, numbers past what
  // a double holds, escapes that decode to unstorable characters, and keys that name the prototype.
  const FIELDS = ['handle', 'model', 'bio', 'body', 'amount', 'percent', 'value', 'key', 'url', 'limit', 'mint', 'to', 'tags', 'title'];
  const field = fc.constantFrom(...FIELDS);
  const deep = fc
    .record({ levels: fc.integer({ min: 1_000, max: 5_000 }), shape: fc.constantFrom('array', 'object', 'mixed'), under: fc.option(field, { nil: undefined }) })
    .map(({ levels, shape, under }) => {
      const opens = Array.from({ length: levels }, (_, i) => (shape === 'array' || (shape === 'mixed' && i % 2) ? '[' : '{"a":'));
      const closes = opens.map((open) => (open === '[' ? ']' : '}')).reverse();
      const nested = `${opens.join('')}1${closes.join('')}`;
      return under ? `{"handle":"fuzzer","model":"m","${under}":${nested}}` : nested;
    });
  const hugeNumber = fc.constantFrom('1e400', '-1e400', '9'.repeat(400), `-${'9'.repeat(400)}`, '-0', '1e-400', `0.${'0'.repeat(400)}1`, '18446744073709551616', '9007199254740993');
  // Escapes as JSON text spells them (lone surrogates, NUL, bidi controls), and characters sent as themselves.
  const oddText = fc.constantFrom('\\ud800', '\\udfff', 'a\\ud800b', '\\ud83d', '\\u0000', 'a\\u0000', '\\u202eevil', '\\u200f\\u061c', '\u{1f680}\u{1f9d1}\u200d\u{1f680}', '\u202e\u0645\u0631\u062d\u0628\u0627', '\\ud83d\\ude80', '\\u2028\\u2029', '\\uffff', '\\ufeff');
  const prototypeKey = fc.constantFrom('__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString');
  const rawValue = fc.oneof(hugeNumber, oddText.map((t) => `"${t}"`), fc.constantFrom('{"polluted":true}', '{"prototype":{"polluted":true}}', 'null', '[]'));
  const rawMember = fc.oneof(fc.tuple(field, rawValue), fc.tuple(oddText, rawValue), fc.tuple(prototypeKey, rawValue)).map(([name, value]) => `"${name}":${value}`);
  const rawObject = fc.array(rawMember, { minLength: 1, maxLength: 6 }).map((members) => `{"handle":"fuzzer","model":"m",${members.join(',')}}`);
  const hostile = fc.oneof(deep, rawObject, rawValue);
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/json; charset=utf-32',
        'application/merge-patch+json',
        'application/jsonx',
      ),
    },
  );
  // Integer and number query parameters written in forms Number() reads but decimal digits do not.
  const NUMERIC_QUERY = ['limit', 'before', 'since', 'after', 'amount', 'slippage_bps', 'wait'];
  const numericQuery = fc
    .dictionary(fc.constantFrom(...NUMERIC_QUERY), fc.constantFrom('0x10', '1e3', ' 5', '5.0', '0b11', '0o7', '+5', 'Infinity', '1_0', '5 '), { minKeys: 1, maxKeys: 2 })
    // wait=5.0 is a valid number of seconds: a long-poll held for nothing.
    .filter((q) => q.wait !== '5.0');

  const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
  // A GET that declares no query and no path parameters varies only in headers and stray query keys; its
  // runs go to the routes that take input, to keep the suite's time bounded.
  const runsFor = (route: RouteSpec) => (route.method === 'get' && !route.query && !route.params ? Math.ceil(RUNS / 5) : RUNS);

  it.each(routeTable().map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 4, arbitrary: query }, { weight: 1, arbitrary: numericQuery }),
        fc.oneof(body.map((b) => JSON.stringify(b)), trade.map((b) => JSON.stringify(b)), raw, { weight: 2, arbitrary: hostile }),
        contentType,
        segment,
        fc.constantFrom('none', 'valid', 'garbage'),
        encoding,
        async (q, text, type, param, auth, contentEncoding) => {
          const path = route.path.replace(/\{\w+\}/g, param);
          const search = new URLSearchParams(q as Record<string, string>).toString();
          const headers: Record<string, string> = {};
          if (auth === 'valid') headers.authorization = `Bearer ${key}`;
          if (auth === 'garbage') headers.authorization = `Bearer svc_sk_${param}`;
          if (contentEncoding && route.method !== 'get') headers['content-encoding'] = contentEncoding;
          if (type) headers['content-type'] = type;
          // As bytes, a body goes without a Content-Type unless one was chosen.
          const options = route.method === 'get' ? { headers } : { raw: type ? text : Buffer.from(text), headers };
          const res = await call(server.url, route.method.toUpperCase(), search ? `${path}?${search}` : path, options);
          expect(res.status).toBeLessThan(500);
          // call() has checked the reply against the OpenAPI document: a status the route documents, and the
          // schema of that status (the envelope with its codes, or the route's own format: Prometheus text,
          // the OpenAPI document, JSON-RPC, ...).
          if (route.path === '/api/v1/rotate' && res.status === 200 && auth === 'valid') key = res.body.api_key;
        },
      ),
      // A fixed seed keeps CI repeatable; FUZZ_SEED=random (with a larger FUZZ_RUNS) explores further.
      { numRuns: runsFor(route), seed: process.env.FUZZ_SEED === 'random' ? undefined : Number(process.env.FUZZ_SEED ?? 20261122) },
    );
  }, 120_000);

  // JSON.parse reads 1e309 as Infinity, which no schema bound stopped and the Idempotency-Key's hash threw on.
  it('refuses 1e309 and -1e309 in every numeric body field of every route, with an Idempotency-Key and without, as invalid_request on that field', async () => {
    const answers: unknown[] = [];
    const expected: unknown[] = [];
    for (const route of routeTable().filter((r) => r.body)) {
      const name = `${route.method.toUpperCase()} ${route.path}`;
      for (const at of numericPaths(route.body!)) {
        const field = at.join('.');
        for (const number of ['1e309', '-1e309']) {
          for (const idempotencyKey of [undefined, randomUUID()]) {
            const headers: Record<string, string> = { 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) };
            const res = await call(server.url, route.method.toUpperCase(), route.path.replace(/\{\w+\}/g, 'x'), { raw: withNumber(bodyAt(route.body!, at), number), key, headers });
            const keyed = idempotencyKey !== undefined;
            answers.push({ name, field, number, keyed, reply: [res.status, res.body?.error?.code, res.body?.error?.field] });
            expected.push({ name, field, number, keyed, reply: [400, 'invalid_request', field] });
          }
        }
      }
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers).toEqual(expected);
  }, 60_000);

  // Past 2^63 a bigint column refuses the value and the query failed 500; past 2^53 a number is no longer exact.
  it('refuses integers from 2^53 up, and below -2^63, in every integer query parameter of every route, as invalid_request on it', async () => {
    const HUGE = ['9007199254740992', '9223372036854775807', '9223372036854775808', '18446744073709551616', `1${'0'.repeat(30)}`, '-9223372036854775809'];
    const answers: unknown[] = [];
    const expected: unknown[] = [];
    for (const route of routeTable().filter((r) => r.query)) {
      const name = `${route.method.toUpperCase()} ${route.path}`;
      const params = Object.fromEntries(propertiesOf(route.params));
      const path = route.path.replace(/\{(\w+)\}/g, (_m, param: string) => encodeURIComponent(String(sampleOf(params[param]!))));
      const others = Object.fromEntries(Object.entries(requiredSamples(route.query)).map(([field, value]) => [field, String(value)]));
      for (const [field, property] of propertiesOf(route.query)) {
        if (!typesOf(property).includes('integer')) continue;
        for (const value of HUGE) {
          const search = new URLSearchParams({ ...others, [field]: value }).toString();
          const res = await call(server.url, route.method.toUpperCase(), `${path}?${search}`, { key });
          answers.push({ name, field, value, reply: [res.status, res.body?.error?.code, res.body?.error?.field] });
          expected.push({ name, field, value, reply: [400, 'invalid_request', field] });
        }
      }
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers).toEqual(expected);
  }, 60_000);

  interface ToolResult {
    isError?: boolean;
    structuredContent: { ok: boolean; error?: { code: string; field?: string } };
  }

  /** One tools/call as JSON-RPC text, its result checked against the OpenAPI document as its endpoint's reply. */
  async function callTool(profile: McpProfile, name: string, argumentsText: string): Promise<ToolResult> {
    const url = `${server.url}${profile === 'full' ? '/mcp' : '/mcp/read'}`;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...(profile === 'full' ? { authorization: `Bearer ${key}` } : {}) };
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${argumentsText}}}`;
    const res = await checkedFetch(url, { method: 'POST', headers, body });
    expect([name, argumentsText, res.status]).toEqual([name, argumentsText, 200]);
    const { result } = (await res.json()) as { result: ToolResult };
    const { route } = mcpTools(routeTable(), profile).find((t) => t.name === name)!;
    const status = result.isError ? statusOf(result.structuredContent.error!.code) : (route.status ?? 200);
    checkReply(route.method, `${server.url}${route.path.replace(/\{\w+\}/g, 'x')}`, status, 'application/json', JSON.stringify(wordsInPlace(result.structuredContent)));
    return result;
  }
  const refusalOf = (result: ToolResult) => [result.isError ?? false, result.structuredContent.error?.code, result.structuredContent.error?.field];
  const PROFILES: McpProfile[] = ['full', 'read'];

  // encodeURIComponent throws on a lone surrogate, and a path argument was encoded before anything checked it.
  it('refuses a lone surrogate in every path argument of every MCP tool, on /mcp and /mcp/read, as invalid_request on it', async () => {
    const answers: unknown[] = [];
    const expected: unknown[] = [];
    for (const profile of PROFILES) {
      for (const tool of mcpTools(routeTable(), profile)) {
        for (const [field, placed] of Object.entries(tool.placement)) {
          if (placed !== 'params') continue;
          for (const surrogate of ['\ud800', '\udfff']) {
            const args = { ...requiredSamples(tool.inputSchema), [field]: surrogate, ...(tool.route.method === 'post' ? { idempotency_key: randomUUID() } : {}) };
            const result = await callTool(profile, tool.name, JSON.stringify(args));
            answers.push({ profile, tool: tool.name, field, surrogate, refusal: refusalOf(result) });
            expected.push({ profile, tool: tool.name, field, surrogate, refusal: [true, 'invalid_request', field] });
          }
        }
      }
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers).toEqual(expected);
  }, 60_000);

  // Query validation coerces text, as an HTTP query string needs; a tool argument is JSON, and 1e309 was searched as "Infinity".
  it('refuses a number in every string argument of every MCP tool, on /mcp and /mcp/read, as invalid_request on it', async () => {
    const answers: unknown[] = [];
    const expected: unknown[] = [];
    for (const profile of PROFILES) {
      for (const tool of mcpTools(routeTable(), profile)) {
        for (const [field, property] of propertiesOf(tool.inputSchema)) {
          if (!typesOf(property).includes('string')) continue;
          for (const number of ['5', '1e309', '-1e309']) {
            const args = withNumber({ ...requiredSamples(tool.inputSchema), [field]: PLACEHOLDER }, number);
            const result = await callTool(profile, tool.name, args);
            answers.push({ profile, tool: tool.name, field, number, refusal: refusalOf(result) });
            expected.push({ profile, tool: tool.name, field, number, refusal: [true, 'invalid_request', field] });
          }
        }
      }
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers).toEqual(expected);
  }, 60_000);
});
