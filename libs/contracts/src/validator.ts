import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export type JsonSchema = Record<string, unknown>;

export interface Invalid {
  /** Dotted path of the offending field, e.g. `handle` or `tags.3`; empty for the body itself. */
  field: string;
  message: string;
}

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes, strict: false });
  addFormats(ajv);
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
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { field: [path, extra].filter(Boolean).join('.'), message: `${[path, extra].filter(Boolean).join('.')} is not a known field` };
  }
  return { field, message: `${subject} ${error.message ?? 'is invalid'}` };
}

export interface Validator {
  (value: unknown): Invalid | null;
}

/**
 * The first string holding U+0000, if any. JSON allows it, PostgreSQL text does not: accepted once,
 * it would sit on the ledger forever and stop every projection that stores it.
 */
function findNul(value: unknown, path: string[]): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const found = key.includes('\u0000') ? [...path, key] : findNul(inner, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

function wrap(fn: ValidateFunction, where: string): Validator {
  return (value) => {
    const nul = findNul(value, []);
    if (nul) {
      const field = nul.join('.');
      return { field, message: `${field || where} must not contain the NUL character (U+0000)` };
    }
    return fn(value) ? null : describe(fn.errors![0]!, where);
  };
}

export function bodyValidator(schema: JsonSchema): Validator {
  return wrap(bodies.compile(schema), 'body');
}

export function queryValidator(schema: JsonSchema): Validator {
  return wrap(queries.compile(schema), 'query');
}
