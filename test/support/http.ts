import { checkReply } from './openapi';

/**
 * A thin JSON client over fetch, as an agent program would write it. Every reply is checked against the
 * service's OpenAPI document (./openapi.ts): a reply the document does not describe fails the test.
 */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  /** `raw` as bytes goes without a Content-Type unless one is given (fetch labels a string text/plain). */
  options: { body?: unknown; key?: string; headers?: Record<string, string>; raw?: string | Uint8Array } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Uint8Array | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  checkReply(method, base + path, res.status, res.headers.get('content-type'), text);
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: the test asserts on the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

let counter = 0;
export function uniqueHandle(prefix = 'c'): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}`.slice(0, 31);
}
