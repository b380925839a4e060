/**
 * Child process: the clients of the realtime bench, in their own process so they never share the
 * server's event loop.
 *   LIVE_MODE=ws   opens LIVE_COUNT sockets to LIVE_URL; each frame carries {"t0": ms} (in a post body
 *                  for the service); prints {event:'delivered', t0, latencies} once every socket has it.
 *   LIVE_MODE=poll keeps LIVE_COUNT long-polls on LIVE_URL held; after a `t0 <ms>` line on stdin, prints
 *                  {event:'woken', t0, latencies} once every poll has answered, then holds them again.
 * Latencies are ms from t0 (the parent's clock just before it made the post) to arrival here.
 */
import http from 'node:http';
import readline from 'node:readline';
import WebSocket from 'ws';

const mode = process.env.LIVE_MODE;
const url = process.env.LIVE_URL!;
const count = Number(process.env.LIVE_COUNT);
const now = () => performance.timeOrigin + performance.now();
const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

function t0Of(text: string): number | undefined {
  try {
    const frame = JSON.parse(text) as { t0?: number; data?: { body?: string }; kind?: string };
    if (typeof frame.t0 === 'number') return frame.t0;
    if (frame.data?.body) return (JSON.parse(frame.data.body) as { t0?: number }).t0;
  } catch {
    return undefined;
  }
  return undefined;
}

async function sockets(): Promise<void> {
  const rounds = new Map<number, number[]>();
  const open: WebSocket[] = [];
  for (let i = 0; i < count; i += 250) {
    await Promise.all(
      Array.from({ length: Math.min(250, count - i) }, () => new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        ws.on('message', (data) => {
          const arrived = now();
          const t0 = t0Of(data.toString());
          if (t0 === undefined) return;
          const list = rounds.get(t0) ?? [];
          list.push(arrived - t0);
          rounds.set(t0, list);
          if (list.length === count) {
            rounds.delete(t0);
            emit({ event: 'delivered', t0, latencies: list });
          }
        });
        ws.once('open', () => resolve());
        ws.once('error', reject);
        open.push(ws);
      })),
    );
  }
  emit({ bench: 'ready', port: 0, opened: open.length });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

async function polls(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  let t0: number | undefined;
  let woken: number[] = [];
  let held = 0;
  const poll = (etag?: string) => {
    const req = http.get(url, { agent, headers: etag ? { 'if-none-match': etag } : {} }, (res) => {
      res.resume();
      res.on('end', () => {
        const arrived = now();
        held -= 1;
        if (t0 !== undefined && res.statusCode === 200) {
          woken.push(arrived - t0);
          if (woken.length === count) {
            emit({ event: 'woken', t0, latencies: woken });
            t0 = undefined;
            woken = [];
          }
        }
        held += 1;
        poll((res.headers.etag as string | undefined) ?? etag);
      });
    });
    req.on('error', (error) => emit({ event: 'error', message: error.message }));
  };
  // The first request learns the ETag (the service's board); every poll then waits on it.
  const first = !url.includes('/pulse') ? undefined : await new Promise<string | undefined>((resolve) => {
    http.get(url.replace(/wait=\d+/, 'wait=0'), { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.headers.etag as string | undefined));
    });
  });
  for (let i = 0; i < count; i++) {
    held += 1;
    poll(first);
  }
  emit({ bench: 'ready', port: 0, polls: held });
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const [command, value] = line.split(' ');
    if (command === 't0') {
      t0 = Number(value);
      woken = [];
    }
  });
  lines.on('close', () => process.exit(0));
}

(mode === 'ws' ? sockets() : polls()).catch((error) => {
  console.error(error);
  process.exit(1);
});
