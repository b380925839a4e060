/** What the audit's network calls share: the error that concludes nothing (exit 2) and retries with backoff. */

export const RETRIES = 3;
const BACKOFF_MS = 500;
export const REQUEST_TIMEOUT_MS = 30_000;

/** Nothing could be concluded: bad arguments, an unreachable service or RPC, or an answer of the wrong shape. */
export class AuditError extends Error {}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits before attempt `attempt` (0 is the first, which does not wait). */
export function backoff(attempt: number): Promise<void> {
  return attempt === 0 ? Promise.resolve() : sleep(BACKOFF_MS * 2 ** (attempt - 1));
}

/** A 4xx other than 429 will not change on a retry; everything else (network, 5xx, 429) may. */
function isRetryable(status: number): boolean {
  return status === 429 || status >= 500;
}

export async function getJson(base: string, path: string): Promise<Record<string, unknown>> {
  const url = base + path;
  let lastProblem = '';
  for (let attempt = 0; attempt <= RETRIES; attempt += 1) {
    await backoff(attempt);
    let res: Response;
    try {
      res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      lastProblem = cause?.code ?? cause?.message ?? (error as Error).message;
      continue;
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      lastProblem = `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
      if (isRetryable(res.status)) continue;
      break;
    }
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new AuditError(`GET ${url} did not answer JSON`);
    }
  }
  throw new AuditError(`GET ${url} failed after ${RETRIES} retries: ${lastProblem}`);
}
