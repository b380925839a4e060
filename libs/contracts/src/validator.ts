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

function wrap(fn: ValidateFunction, where: string): Validator {
  return (value) => (fn(value) ? null : describe(fn.errors![0]!, where));
}

export function bodyValidator(schema: JsonSchema): Validator {
  return wrap(bodies.compile(schema), 'body');
}

export function queryValidator(schema: JsonSchema): Validator {
  return wrap(queries.compile(schema), 'query');
}
