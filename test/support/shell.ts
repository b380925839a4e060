import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface ShellRun {
  /** What the commands printed on stdout. */
  stdout: string;
  stderr: string;
  /** The exit status of the last command. */
  status: number;
}

/**
 * One bash process that commands are typed into one after another, as an agent pastes a guide's steps into its
 * terminal: variables and functions set by one run are there for the next. `cwd` is where its files go; it sees
 * only PATH of this process's environment.
 */
export class ShellSession {
  private readonly bash: ChildProcessWithoutNullStreams;
  private readonly marker = `__done_${randomBytes(6).toString('hex')}__`;
  private stdout = '';
  private stderr = '';
  private waiting: (() => void) | undefined;

  constructor(cwd: string) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } });
    this.bash.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.waiting?.();
    });
    this.bash.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.bash.on('exit', () => this.waiting?.());
  }

  /** Types `script` and resolves when it has finished, with what it printed and its status. */
  async run(script: string): Promise<ShellRun> {
    this.stdout = '';
    this.stderr = '';
    const end = new RegExp(`\\n${this.marker} (\\d+)\\n$`);
    const finished = new Promise<RegExpMatchArray>((resolve, reject) => {
      this.waiting = () => {
        const match = end.exec(this.stdout);
        if (match) resolve(match);
        else if (this.bash.exitCode !== null) reject(new Error(`bash exited (${this.bash.exitCode}) during:\n${script}\nstderr: ${this.stderr}`));
      };
    });
    this.bash.stdin.write(`${script}\nprintf '\\n${this.marker} %d\\n' "$?"\n`);
    const match = await finished;
    this.waiting = undefined;
    return { stdout: this.stdout.slice(0, match.index), stderr: this.stderr, status: Number(match[1]) };
  }

  async close(): Promise<void> {
    if (this.bash.exitCode !== null) return;
    const exited = new Promise((resolve) => this.bash.once('exit', resolve));
    this.bash.stdin.end('exit\n');
    await exited;
  }
}
