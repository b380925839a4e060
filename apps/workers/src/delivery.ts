import { createHmac } from 'node:crypto';
import dns from 'node:dns';
import fs from 'node:fs';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import tls from 'node:tls';
import { guardedLookup, LOOPBACK_ALLOW_LIST, REFUSED_ADDRESS_CODE } from './ssrf';

export interface DoorbellAgentOptions {
  allowLoopback: boolean;
  /** PEM file of an extra trusted CA (DOORBELL_CA_FILE). */
  caFile?: string;
  /** Stands in for DNS (tests); the resolved addresses are filtered all the same. */
  lookup?: LookupFunction;
}

/**
 * The https.Agent every delivery goes through: `request-filtering-agent` refuses, per connection, any
 * resolved address that is not public unicast (with the switch on, loopback is let through, nothing
 * else), and our own lookup guard refuses the same ranges as registration does.
 */
export async function createDoorbellAgent(options: DoorbellAgentOptions): Promise<https.Agent> {
  // An ES module: a dynamic import loads it from this CommonJS code under node and under jest alike.
  const { RequestFilteringHttpsAgent } = await import('request-filtering-agent');
  const extraCa = options.caFile ? fs.readFileSync(options.caFile, 'utf8') : undefined;
  return new RequestFilteringHttpsAgent({
    // No per-host socket limit: the worker's concurrency bounds it, and a request queued for a socket
    // would spend its timeout waiting.
    keepAlive: true,
    ...(extraCa ? { ca: [...tls.rootCertificates, extraCa] } : {}),
    lookup: guardedLookup(options.lookup ?? (dns.lookup as LookupFunction), options.allowLoopback),
    allowPrivateIPAddress: false,
    allowMetaIPAddress: false,
    // The agent tries each entry in order and warns when an IPv6 target meets an IPv4 range; `::1` first
    // keeps the loopback case quiet.
    allowIPAddressList: options.allowLoopback ? LOOPBACK_ALLOW_LIST : [],
  });
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`, the `x-svc-signature` header. */
export function signBody(secret: Buffer | string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface PostOutcome {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
  startedAt: number;
  durationMs: number;
  /** The request was cut short by the caller's signal (a stopping worker), not by the receiver. */
  aborted: boolean;
  /** For the server's log only: what `error` leaves out (e.g. the address a name resolved to). */
  detail?: string;
}

/**
 * What the owner's delivery log says when the address was refused. The address itself stays out of it:
 * it would tell anyone who registers a name what that name resolves to inside the service's network.
 */
export const REFUSED_ADDRESS_ERROR = 'refused: the host resolves to a non-public address';

const ERROR_TEXT_MAX = 300;

/**
 * POSTs the body once: no redirect is followed, and the whole exchange (connect, TLS, answer) must end
 * within `timeoutMs`. A 2xx answer is a delivery; anything else is a failure described in words.
 */
export function postOnce(
  agent: https.Agent,
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<PostOutcome> {
  const startedAt = Date.now();
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (httpStatus: number | null, error: string | null, detail?: string) => {
      if (settled) return;
      settled = true;
      resolve({
        ok: error === null,
        httpStatus,
        error: error === null ? null : error.slice(0, ERROR_TEXT_MAX),
        startedAt,
        durationMs: Date.now() - startedAt,
        aborted: Boolean(options.signal?.aborted),
        ...(detail === undefined ? {} : { detail }),
      });
    };
    const fail = (error: unknown) => {
      const described = describe(error);
      finish(null, described.text, described.detail);
    };
    let request: ReturnType<typeof https.request>;
    try {
      request = https.request(url, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(body.length) },
        signal: options.signal,
      });
    } catch (error) {
      fail(error);
      return;
    }
    // Bounds the answer's body too: a receiver that never ends it loses the socket, not a worker slot.
    const deadline = setTimeout(() => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      response.on('error', () => undefined);
      response.on('close', () => clearTimeout(deadline));
      response.resume();
      if (status >= 200 && status < 300) finish(status, null);
      else if (status >= 300 && status < 400) finish(status, `HTTP ${status}: redirects are not followed; register the final URL`);
      else finish(status, `HTTP ${status}`);
    });
    request.on('error', (error) => {
      clearTimeout(deadline);
      fail(error);
    });
    request.on('close', () => {
      if (!settled) clearTimeout(deadline);
      finish(null, 'the connection closed without an answer');
    });
    request.end(body);
  });
}

function describe(error: unknown): { text: string; detail?: string } {
  if (!(error instanceof Error)) return { text: String(error) };
  const code = (error as NodeJS.ErrnoException).code;
  const text = code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  return isAddressRefusal(error) ? { text: REFUSED_ADDRESS_ERROR, detail: text } : { text };
}

/** Our lookup guard's refusal, or request-filtering-agent's (which carries no code, only its wording). */
function isAddressRefusal(error: Error): boolean {
  return (error as NodeJS.ErrnoException).code === REFUSED_ADDRESS_CODE || /^DNS lookup .* is not allowed\b/.test(error.message);
}
