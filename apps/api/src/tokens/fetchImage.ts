import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { LookupFunction } from 'node:net';
import { checkDoorbellUrl } from '@svc/contracts';
import { Rejected } from '@svc/domain';
import { createSafeHttpsAgent, isAddressRefusal } from '@svc/runtime';
import { IMAGE_TYPES, MAX_IMAGE_BYTES, SNIFF_BYTES, imageRejected, notAnImage, sniffImageType, tooLarge, type ImageType } from './image';

/** The whole fetch, redirects included, from the first connection to the last byte. */
export const IMAGE_FETCH_TIMEOUT_MS = 10_000;
/** Redirects followed, each one checked like the URL the citizen gave. */
export const IMAGE_MAX_REDIRECTS = 3;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const UNREACHABLE: Record<string, string> = {
  ENOTFOUND: 'its host name does not resolve',
  EAI_AGAIN: 'its host name could not be resolved now',
  ECONNREFUSED: 'its host refused the connection',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'its host cannot be reached',
  ENETUNREACH: 'its host cannot be reached',
  ETIMEDOUT: 'the connection timed out',
};

export interface ImageFetcherOptions {
  /**
   * Let loopback addresses through (tests only: a local https server). Private, link-local and metadata
   * addresses stay refused whatever this says.
   */
  allowLoopback?: boolean;
  /** PEM file of an extra trusted CA (tests: the local server's self-signed certificate). */
  caFile?: string;
  /** Stands in for DNS (tests); the resolved addresses are filtered all the same. */
  lookup?: LookupFunction;
  timeoutMs?: number;
  maxRedirects?: number;
}

export interface FetchedImage {
  bytes: Buffer;
  contentType: ImageType;
  /** The URL the bytes came from, after redirects. */
  url: string;
}

/** The fetch's own deadline, told apart from every other way a request can end. */
class Deadline extends Error {}

/**
 * Fetches token images from https URLs a citizen gives, through the SSRF-safe agent the doorbells use: a
 * host that is (or resolves to) a non-public address is refused, so is anything but https, and no more
 * than MAX_IMAGE_BYTES are ever read. Every failure is the client's URL, so every failure is a 400
 * `invalid_request` naming `image`.
 */
export class ImageFetcher {
  private agent?: Promise<https.Agent>;
  private readonly allowLoopback: boolean;
  private readonly timeoutMs: number;
  private readonly maxRedirects: number;

  constructor(private readonly options: ImageFetcherOptions = {}) {
    this.allowLoopback = options.allowLoopback ?? false;
    this.timeoutMs = options.timeoutMs ?? IMAGE_FETCH_TIMEOUT_MS;
    this.maxRedirects = options.maxRedirects ?? IMAGE_MAX_REDIRECTS;
  }

  private safeAgent(): Promise<https.Agent> {
    // One-off fetches from hosts a citizen chose: no socket is worth keeping open for the next one.
    this.agent ??= createSafeHttpsAgent({ allowLoopback: this.allowLoopback, caFile: this.options.caFile, lookup: this.options.lookup, keepAlive: false });
    return this.agent;
  }

  async fetch(rawUrl: string): Promise<FetchedImage> {
    let url = this.checked(rawUrl);
    const agent = await this.safeAgent();
    const deadline = Date.now() + this.timeoutMs;
    for (let redirects = 0; ; redirects += 1) {
      const response = await this.request(agent, url, deadline);
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        response.destroy();
        const location = response.headers.location;
        if (!location) throw imageRejected(`URL answered HTTP ${status} without a Location`);
        if (redirects >= this.maxRedirects) throw imageRejected(`URL redirected more than ${this.maxRedirects} times`);
        let next: string;
        try {
          next = new URL(location, url).href;
        } catch {
          throw imageRejected(`URL redirected to an invalid Location (HTTP ${status})`);
        }
        url = this.checked(next, true);
        continue;
      }
      if (status < 200 || status > 299) {
        response.destroy();
        throw imageRejected(`URL answered HTTP ${status}`, { http_status: status });
      }
      const bytes = await this.body(response, deadline);
      const contentType = sniffImageType(bytes);
      if (!contentType) throw notAnImage('URL’s content');
      return { bytes, contentType, url };
    }
  }

  /**
   * The registration-time check of a doorbell URL, phrased for `image`: https, no credentials, no local or
   * non-public host. A fragment is dropped rather than refused: it never leaves this process.
   */
  private checked(raw: string, redirected = false): string {
    const check = checkDoorbellUrl(raw.replace(/#.*$/s, ''), { allowLoopback: this.allowLoopback });
    if (check.ok) return check.url;
    const rule = check.problem.replace(/^url /, '').replace(/, e\.g\. \S+$/, '');
    throw imageRejected(redirected ? `URL redirected to ${raw.slice(0, 200)}, which ${rule}` : `URL ${rule}`);
  }

  private request(agent: https.Agent, url: string, deadline: number): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      let request: ReturnType<typeof https.get>;
      try {
        request = https.get(url, {
          agent,
          headers: { accept: IMAGE_TYPES.join(', '), 'accept-encoding': 'identity', 'user-agent': 'agent-trading-society-media/1' },
        });
      } catch (error) {
        reject(this.failure(error));
        return;
      }
      const timer = setTimeout(() => request.destroy(new Deadline()), Math.max(0, deadline - Date.now()));
      request.on('response', (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(this.failure(error));
      });
    });
  }

  private async body(response: IncomingMessage, deadline: number): Promise<Buffer> {
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_IMAGE_BYTES) {
      response.destroy();
      throw tooLarge(declared);
    }
    const timer = setTimeout(() => response.destroy(new Deadline()), Math.max(0, deadline - Date.now()));
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_IMAGE_BYTES) {
          response.destroy();
          throw tooLarge();
        }
        // A body that cannot be an image is not read to its end.
        if (chunks.length === 0 && chunk.length >= SNIFF_BYTES && !sniffImageType(chunk)) {
          response.destroy();
          throw notAnImage('URL’s content');
        }
        chunks.push(chunk);
      }
    } catch (error) {
      throw this.failure(error);
    } finally {
      clearTimeout(timer);
    }
    if (!response.complete) throw imageRejected('URL’s answer ended before its body was complete');
    return Buffer.concat(chunks);
  }

  private failure(error: unknown): Rejected {
    if (error instanceof Rejected) return error;
    if (error instanceof Deadline) return imageRejected(`URL did not answer in full within ${this.timeoutMs / 1000} s`);
    // Node's own errors are not `instanceof Error` in every realm (a test's vm context): judged by shape.
    if (typeof error !== 'object' || error === null || typeof (error as Error).message !== 'string') {
      return imageRejected(`URL could not be fetched: ${String(error)}`);
    }
    // The address stays out of the message: it would tell the caller what a name resolves to inside the service's network.
    if (isAddressRefusal(error as Error)) return imageRejected('URL must reach a public address: its host resolves to a non-public address');
    const { code, message } = error as NodeJS.ErrnoException;
    const why = (code && UNREACHABLE[code]) ?? (code && /CERT|SSL|TLS|VERIFY/.test(code) ? `its TLS certificate is not trusted (${code})` : undefined);
    return imageRejected(`URL could not be fetched: ${why ?? code ?? message}`);
  }
}

let shared: ImageFetcher | undefined;

/** The fetcher the API uses: loopback refused like every other non-public address. */
export function defaultImageFetcher(): ImageFetcher {
  shared ??= new ImageFetcher();
  return shared;
}
