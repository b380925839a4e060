import Ajv, { type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import bs58 from 'bs58';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { findSecret, SECRET_KINDS, type SecretKind } from './secrets';

export type JsonSchema = Record<string, unknown>;

/**
 * A schema written `as const satisfies LiteralSchema`: its literal type is kept, so the type of what it accepts is
 * derived from it (RequestOf) instead of being written again beside it.
 */
export type LiteralSchema = Exclude<JSONSchema, boolean>;

/**
 * A request (body, query or path parameters) as its handler reads it once its schema has passed it: ajv filled in
 * each default, so a property that has one is present. Properties the schema does not declare, which it lets
 * through, are left out of the type: nothing reads them.
 */
export type RequestOf<S extends LiteralSchema> = string extends keyof S ? NotLiteral : DeclaredProperties<FromSchema<S>>;

/** A schema typed `JsonSchema` has lost the literal types a request's type is derived from. */
type NotLiteral = { 'write the schema `as const satisfies LiteralSchema`': never };

type DeclaredProperties<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

export interface Invalid {
  /** Dotted path of the offending field, e.g. `handle` or `tags.3`; empty for the body itself. */
  field: string;
  message: string;
  /** The error code when it is more precise than `invalid_request` (a malformed key is `invalid_pubkey`). */
  code?: string;
  /** What kind of secret a `secret_in_body` refusal found (never the secret itself). */
  kind?: SecretKind;
}

/**
 * Marks a free-text field others or the logs could see (a post, a bounty, a memo, a note): one that holds an API key,
 * a wallet's secret key or a recovery phrase is refused as `secret_in_body`, before anything stores the request.
 */
export const REFUSES_SECRETS = 'x-refuses-secrets';
export const refusesSecrets = { [REFUSES_SECRETS]: true } as const;

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** A Solana address: base58 of exactly 32 bytes (on the curve or not: program-derived addresses are keys too). */
export function isBase58PublicKey(text: string): boolean {
  if (!BASE58.test(text)) return false;
  try {
    return bs58.decode(text).length === 32;
  } catch {
    return false;
  }
}

const refuseSecrets: SchemaValidateFunction = (refuses: boolean, text: string) => {
  const kind = refuses ? findSecret(text) : undefined;
  refuseSecrets.errors = kind === undefined ? [] : [{ keyword: REFUSES_SECRETS, message: SECRET_KINDS[kind], params: { kind } }];
  return kind === undefined;
};

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes, strict: false });
  addFormats(ajv);
  ajv.addFormat('solana-pubkey', { type: 'string', validate: isBase58PublicKey });
  ajv.addKeyword({
    keyword: REFUSES_SECRETS,
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: refuseSecrets,
  });
  return ajv;
}

const bodies = makeAjv(false);
// Query strings and path parameters arrive as text; `limit=10` means the number 10.
const queries = makeAjv(true);

function describe(error: ErrorObject, where: string): Invalid {
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  if (error.keyword === 'required') {
    const field = [path, (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
    return { field, message: `${field} is required` };
  }
  const field = path;
  const subject = field || where;
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ');
    return { field, message: `${subject} must be one of ${allowed}` };
  }
  if (error.keyword === 'format' && (error.params as { format: string }).format === 'solana-pubkey') {
    return { field, message: `${subject} is not a base58 Solana public key (32 bytes)`, code: 'invalid_pubkey' };
  }
  if (error.keyword === REFUSES_SECRETS) {
    const { kind } = error.params as { kind: SecretKind };
    return {
      field,
      message: `${subject} holds ${SECRET_KINDS[kind]}; secrets are never posted, stored or logged here: remove it and send again (nothing was kept)`,
      code: 'secret_in_body',
      kind,
    };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { field: [path, extra].filter(Boolean).join('.'), message: `${[path, extra].filter(Boolean).join('.')} is not a known field` };
  }
  return { field, message: `${subject} ${error.message ?? 'is invalid'}` };
}

export interface Validator {
  (value: unknown): Invalid | null;
}

/** In `u` mode a paired surrogate is one code point, so this matches only a lone (unpaired) surrogate. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why a string cannot be stored and hashed as sent, if it cannot. */
export function unstorableText(text: string): string | null {
  // JSON allows both; PostgreSQL text refuses U+0000 and jsonb refuses a lone surrogate, and RFC 8785
  // cannot canonicalise one. Accepted once, either would sit on the ledger forever and stop every
  // projection that stores it.
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds a lone UTF-16 surrogate)';
  return null;
}

/**
 * Why a key or value inside a request cannot be stored and hashed as sent, if it cannot. JSON text reads 1e309 as
 * Infinity, which JSON cannot write back, RFC 8785 cannot canonicalise and no column holds: it is refused wherever
 * it stands, also where no schema describes it.
 */
function unstorable(value: unknown): string | null {
  if (typeof value === 'string') return unstorableText(value);
  if (typeof value === 'number' && !Number.isFinite(value)) return 'must be a finite number';
  return null;
}

/** An array or object being walked, and how far into it the walk is. */
interface Level {
  container: unknown[] | Record<string, unknown>;
  /** The object's keys; undefined for an array. */
  keys: string[] | undefined;
  next: number;
}

/**
 * The first key or string that cannot be stored, with its path. A loop over an explicit stack, not recursion:
 * however deep a value reaches it, it cannot overflow the call stack.
 */
function findUnstorable(value: unknown): { path: string[]; why: string } | null {
  if (value === null || typeof value !== 'object') {
    const why = unstorable(value);
    return why ? { path: [], why } : null;
  }
  const levels: Level[] = [];
  const enter = (inner: unknown) => {
    if (Array.isArray(inner)) levels.push({ container: inner, keys: undefined, next: 0 });
    else if (inner !== null && typeof inner === 'object') levels.push({ container: inner as Record<string, unknown>, keys: Object.keys(inner), next: 0 });
  };
  const pathHere = () => levels.map((level) => (level.keys ? level.keys[level.next - 1]! : String(level.next - 1)));
  enter(value);
  while (levels.length > 0) {
    const level = levels[levels.length - 1]!;
    const size = level.keys ? level.keys.length : (level.container as unknown[]).length;
    if (level.next === size) {
      levels.pop();
      continue;
    }
    const at = level.next++;
    let inner: unknown;
    if (level.keys) {
      const key = level.keys[at]!;
      const why = unstorable(key);
      if (why) return { path: pathHere(), why };
      inner = (level.container as Record<string, unknown>)[key];
    } else {
      inner = (level.container as unknown[])[at];
    }
    if (inner !== null && typeof inner === 'object') {
      enter(inner);
    } else {
      const why = unstorable(inner);
      if (why) return { path: pathHere(), why };
    }
  }
  return null;
}

const DECIMAL_INTEGER = /^-?\d+$/;
const DECIMAL_NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * The query properties ajv would coerce from text with Number(), which also reads `0x10`, `0b1`, `1e3`,
 * ` 5` and `Infinity`: each with the plain decimal form its text must have instead.
 */
function numericTextRules(schema: JsonSchema): [string, RegExp, string][] {
  const rules: [string, RegExp, string][] = [];
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const types = ([] as unknown[]).concat(property.type ?? []);
    if (types.includes('string')) continue;
    if (types.includes('number')) rules.push([name, DECIMAL_NUMBER, 'a number in plain decimal notation (e.g. 12 or 0.5)']);
    else if (types.includes('integer')) rules.push([name, DECIMAL_INTEGER, 'an integer in decimal digits']);
  }
  return rules;
}

/**
 * The query properties, each with a check of a value given typed (an MCP tool argument is JSON, not text): such a
 * value is taken as it is, never coerced, so the number 5 or 1e309 is no string "5" or "Infinity".
 */
function typedChecks(schema: JsonSchema): [string, ValidateFunction][] {
  return Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([name, property]) => [
    name,
    bodies.compile({ type: 'object', properties: { [name]: property } }),
  ]);
}

/** The first key or value that cannot be stored and hashed, as the refusal naming it. */
function refuseUnstorable(value: unknown, where: string): Invalid | null {
  const bad = findUnstorable(value);
  if (!bad) return null;
  const field = bad.path.join('.');
  return { field, message: `${field || where} ${bad.why}` };
}

export function bodyValidator(schema: JsonSchema): Validator {
  const validate = bodies.compile(schema);
  return (value) => refuseUnstorable(value, 'body') ?? (validate(value) ? null : describe(validate.errors![0]!, 'body'));
}

/** Query strings and path parameters: text read as the type its property has, and values given typed as they are. */
export function queryValidator(schema: JsonSchema): Validator {
  const validate = queries.compile(schema);
  const rules = numericTextRules(schema);
  const typed = typedChecks(schema);
  return (value) => {
    const refused = refuseUnstorable(value, 'query');
    if (refused) return refused;
    const fields = value as Record<string, unknown>;
    for (const [field, form, described] of rules) {
      const text = fields[field];
      if (typeof text === 'string' && !form.test(text)) return { field, message: `${field} must be ${described}` };
    }
    for (const [field, check] of typed) {
      const given = fields[field];
      if (given !== undefined && typeof given !== 'string' && !check({ [field]: given })) return describe(check.errors![0]!, 'query');
    }
    return validate(value) ? null : describe(validate.errors![0]!, 'query');
  };
}
