import WebSocket from 'ws';

/** A /ws client that records every frame and lets a test wait for a frame matching a predicate. */
export class WsListener {
  readonly frames: any[] = [];
  private waiters: Array<{ test(f: any): boolean; resolve(f: any): void }> = [];
  readonly closed: Promise<number>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      this.frames.push(frame);
      for (const w of [...this.waiters]) if (w.test(frame)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(frame);
      }
    });
    this.closed = new Promise((resolve) => ws.on('close', (code) => resolve(code)));
  }

  static async open(url: string): Promise<WsListener> {
    const ws = new WebSocket(url);
    const listener = new WsListener(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return listener;
  }

  next(test: (f: any) => boolean): Promise<any> {
    const seen = this.frames.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  close(): Promise<number> {
    this.ws.close();
    return this.closed;
  }
}
