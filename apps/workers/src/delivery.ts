import { createHmac } from 'node:crypto';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { createSafeHttpsAgent, isAddressRefusal } from '@svc/runtime';
import type { DoorbellSigning } from '@svc/vault';

export interface DoorbellAgentOptions {
  allowLoopback: boolean;
  /** PEM file of an extra trusted CA (DOORBELL_CA_FILE). */
  caFile?: string;
  /** Stands in for DNS (tests); the resolved addresses are filtered all the same. */
  lookup?: LookupFunction;
}

/** The https.Agent every delivery goes through: the SSRF-safe agent, its sockets kept alive between deliveries. */
export function createDoorbellAgent(options: DoorbellAgentOptions): Promise<https.Agent> {
  return createSafeHttpsAgent({ ...options, keepAlive: true });
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`: the `x-svc-signature` of doorbells registered before timestamps. */
export function signBody(secret: Buffer | string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * `t=<ms>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, the `x-svc-signature` header (Stripe's scheme): the time is
 * signed with the body, so a receiver that refuses an old `t` cannot be made to take a captured delivery again.
 */
export function signTimestamped(secret: Buffer | string, body: Buffer, at: number): string {
  const mac = createHmac('sha256', secret).update(`${at}.`, 'utf8').update(body).digest('hex');
  return `t=${at},v1=${mac}`;
}

export function signatureHeader(signing: DoorbellSigning, secret: Buffer, body: Buffer, at: number): string {
  return signing === 'body' ? signBody(secret, body) : signTimestamped(secret, body, at);
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
