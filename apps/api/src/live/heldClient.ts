import type { Request, Response } from 'express';
import { ApiError } from '../http/errors';

/** Abort reasons: a reason given spares abort() building a DOMException, thousands at a time on a wake. */
const GONE = 'client gone';
const ANSWERED = 'answered';

/** A long-poll's link to its client, shared by the routes that hold requests in the PulseHub. */
export interface HeldClient {
  /** The client left before the request was answered (or before it could be held at all). */
  readonly gone: boolean;
  /** Settles once the request has been answered or its client has gone (what PulseHub.stop() waits for). */
  readonly answered: Promise<void>;
  /** The signal of the next hold: aborted at once if the client has gone, or when it goes. */
  hold(): AbortSignal;
  /** Ends the current hold, which no longer waits (its request is being answered). */
  release(): void;
}

/**
 * Follows the client of a request about to be held. One that left while the request waited for the read models
 * (its socket closed, so no 'close' will ever come) counts as gone at once: nothing would let it go before its
 * timeout, and thousands of such requests would each be answered into a dead socket 25 s later.
 */
export function followClient(req: Request, res: Response, onAbandoned: () => void): HeldClient {
  let gone = req.socket.destroyed;
  let current: AbortController | undefined;
  if (gone) onAbandoned();
  const answered = gone
    ? Promise.resolve()
    : new Promise<void>((resolve) =>
        res.once('close', () => {
          if (!res.writableFinished) onAbandoned();
          gone = true;
          current?.abort(GONE);
          resolve();
        }),
      );
  return {
    get gone() {
      return gone;
    },
    answered,
    hold() {
      current = new AbortController();
      if (gone) current.abort(GONE);
      return current.signal;
    },
    release() {
      current?.abort(ANSWERED);
    },
  };
}

/** What a request held when the server began to shut down is answered. */
export function shuttingDown(): ApiError {
  return new ApiError(503, 'unavailable', 'this server is shutting down; poll again', {}, { 'Retry-After': '1', Connection: 'close' });
}
