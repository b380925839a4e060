import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/**
 * `node --import tsx <entry>` from the repository root. Not the tsx CLI: it runs the script in a second process,
 * which a SIGKILL of the first would leave running, and a signal would reach the wrapper, not the service.
 */
export function spawnEntry(entry: string, args: string[] = [], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], { cwd: ROOT, ...options });
}

/** SIGKILL, resolved once the process is gone (at once if it already was). */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export interface ChildService {
  url: string;
  child: ChildProcess;
  /** Every line the process wrote, stdout and stderr. */
  output: string[];
  /** SIGTERM: the service shuts down as it would in production. */
  stop(): Promise<void>;
  /** SIGKILL: the service dies where it stands. */
  kill(): Promise<void>;
}

/** Runs an entry file in its own process, as `npm start` would, and waits for its ready line. */
export async function startChild(
  entry: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready = 'service listening',
  readyTimeoutMs = 60_000,
): Promise<ChildService> {
  const child = spawnEntry(entry, args, {
    env: { ...process.env, LOG_LEVEL: 'info', ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start:\n${output.join('\n')}`)), readyTimeoutMs);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        output.push(line);
        if (line.includes(`"msg":"${ready}"`)) {
          clearTimeout(timer);
          resolve((JSON.parse(line).url as string | undefined) ?? '');
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}:\n${output.join('\n')}`));
    });
  });
  return {
    url,
    child,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
    kill: () => killHard(child),
  };
}

/** Runs an entry file to its end, as `npm run <script>` would: its exit status and everything it printed. */
export async function runEntry(entry: string, args: string[], env: Record<string, string | undefined>): Promise<{ status: number | null; output: string }> {
  const child = spawnEntry(entry, args, { env: { ...process.env, ...env } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { status, output };
}
