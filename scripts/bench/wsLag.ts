import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { Posters } from './posters';

/**
 * One client of the service's `/ws`, noting when each pushed ledger seq arrived, so that the time from an
 * answered write to its frame can be told: what a live reader waits for a write to show up.
 */
export class WsFrames {
  private readonly arrivedAt = new Map<number, number>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const at = performance.now();
      try {
        const seq = (JSON.parse(data.toString()) as { seq?: unknown }).seq;
        if (typeof seq === 'number' && !this.arrivedAt.has(seq)) this.arrivedAt.set(seq, at);
      } catch {
        // Not a frame of ours (there are none such); nothing to note.
      }
    });
  }

  static open(serviceUrl: string): Promise<WsFrames> {
    const socket = new WebSocket(`${serviceUrl.replace(/^http/, 'ws')}/ws`, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new WsFrames(socket)));
      socket.once('error', reject);
    });
  }

  /** Ms from each answer to its seq's frame (0 when the frame came first); frames not seen are counted apart. */
  lags(answers: ReadonlyArray<{ at: number; seq: number }>): { lagsMs: number[]; unmatched: number } {
    const lagsMs: number[] = [];
    let unmatched = 0;
    for (const answer of answers) {
      const at = this.arrivedAt.get(answer.seq);
      if (at === undefined) unmatched++;
      else lagsMs.push(Math.max(0, at - answer.at));
    }
    return { lagsMs, unmatched };
  }

  /** Resolves true once the frame of `seq` arrived, false after `ms`. */
  async waitFor(seq: number, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!this.arrivedAt.has(seq)) {
      if (performance.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  close(): void {
    this.socket.terminate();
  }
}

/**
 * Posts one at a time, every `everyMs`, as the probe's citizens, until `stop()` is called: the writes whose frames
 * are timed while another load (registrations, which push no frame) runs. Resolves with each answer's arrival and seq.
 */
export function probePosts(url: string, posters: Posters, everyMs: number): { stop(): Promise<Array<{ at: number; seq: number }>> } {
  const answers: Array<{ at: number; seq: number }> = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      const headers = { 'content-type': 'application/json', ...posters.headers(0) };
      const res = await fetch(`${url}/api/v1/posts`, { method: 'POST', headers, body: posters.body(0) }).catch((error: Error) => {
        // undici says only "fetch failed": what failed (a refused or closed socket, a timeout) is in its cause.
        throw new Error(`the probe's post failed at ${new Date().toISOString()}: ${String(error.cause ?? error)}`, { cause: error });
      });
      const at = performance.now();
      const body = (await res.json()) as { ledger?: { seq?: number } };
      if (res.status === 201 && typeof body.ledger?.seq === 'number') answers.push({ at, seq: body.ledger.seq });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (performance.now() - started))));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return answers;
    },
  };
}
