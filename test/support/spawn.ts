import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

export interface ChildService {
  url: string;
  child: ChildProcess;
  /** Every line the process wrote, stdout and stderr. */
  output: string[];
  stop(): Promise<void>;
}

/**
 * Runs an entry file in its own process, as `npm start` would, and waits for its ready line. It runs
 * under `node --import tsx` so that a signal reaches the service itself, not a wrapper.
 */
export async function startChild(
  entry: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready = 'service listening',
  readyTimeoutMs = 60_000,
): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], {
    cwd: ROOT,
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
  };
}
