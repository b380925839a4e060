import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export interface Child {
  name: string;
  url: string;
  pid: number;
  /** The ready line the child printed (`{ bench: 'ready', port, ... }`). */
  ready: Record<string, unknown>;
  /** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildOptions {
  name: string;
  /** The TypeScript entry file, run through tsx. */
  entry: string;
  /** Where `tsx` resolves from (the repository root). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  nodeFlags?: string[];
  startupTimeoutMs?: number;
}

/**
 * Starts `entry` as a separate node process, so the load generator never shares the server's event
 * loop, and resolves once it has printed its ready line with the port it listens on.
 */
export function startChild(options: ChildOptions): Promise<Child> {
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', options.entry], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const label = `[${options.name}]`;
  return new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(() => {
      void terminate(child, exited, 2000);
      reject(new Error(`${label} did not report ready within ${options.startupTimeoutMs ?? 60_000} ms`));
    }, options.startupTimeoutMs ?? 60_000);
    const lines = readline.createInterface({ input: child.stdout! });
    let ready = false;
    lines.on('line', (line) => {
      if (!ready) {
        const message = readyMessage(line);
        const port = message?.port as number | undefined;
        if (message && port !== undefined) {
          ready = true;
          clearTimeout(timer);
          let stopping: Promise<void> | undefined;
          resolve({
            name: options.name,
            url: `http://127.0.0.1:${port}`,
            pid: child.pid!,
            ready: message,
            stop: (graceMs = 15_000) => (stopping ??= terminate(child, exited, graceMs)),
          });
          return;
        }
      }
      // Anything else the child prints (its warn-level logs) is passed on, marked with its name.
      process.stderr.write(`${label} ${line}\n`);
    });
    child.once('exit', (code, signal) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new Error(`${label} exited before it was ready (code ${code}, signal ${signal}); entry ${path.basename(options.entry)}`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function readyMessage(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const message = JSON.parse(line) as Record<string, unknown>;
    return message.bench === 'ready' && typeof message.port === 'number' ? message : undefined;
  } catch {
    return undefined;
  }
}

async function terminate(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    child.kill('SIGKILL');
    await exited;
  }
}
