import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time a process has used, ms; undefined once it is gone or off Linux. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name, which may itself hold spaces: utime and stime are 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000;
  } catch {
    return undefined;
  }
}

/**
 * CPU used by a set of server processes and by the PostgreSQL backends of their databases over a stretch of
 * load: on a machine of a few cores every process competes for the same CPUs, so CPU per request says where
 * a gap comes from when wall-clock rates only say that there is one.
 */
export class CpuMeter {
  private readonly admin: pg.Client;

  constructor(adminUrl: string) {
    this.admin = new pg.Client({ connectionString: adminUrl, application_name: 'bench-cpu' });
  }

  async start(): Promise<void> {
    await this.admin.connect();
  }

  async close(): Promise<void> {
    await this.admin.end();
  }

  /** Starts a stretch: returns the function that ends it with the CPU ms each part used. */
  async begin(pids: Record<string, number>, databases: string[]): Promise<() => Promise<Record<string, number>>> {
    const before = new Map((await this.sample(pids, databases)).map((part) => [part.key, part.ms]));
    return async () => {
      const used: Record<string, number> = {};
      for (const part of await this.sample(pids, databases)) {
        // A backend that connected during the stretch used all of its time in it.
        used[part.name] = (used[part.name] ?? 0) + part.ms - (before.get(part.key) ?? 0);
      }
      for (const database of databases) used[`postgres ${database}`] ??= 0;
      return used;
    };
  }

  /** Keyed by pid, so that a backend that left during the stretch takes only its own time with it. */
  private async sample(pids: Record<string, number>, databases: string[]): Promise<Array<{ name: string; key: string; ms: number }>> {
    const rows =
      os.platform() === 'linux'
        ? (await this.admin.query<{ pid: number; datname: string }>('select pid, datname from pg_stat_activity where datname = any($1)', [databases])).rows
        : [];
    const parts = [...Object.entries(pids).map(([name, pid]) => ({ name, pid })), ...rows.map((r) => ({ name: `postgres ${r.datname}`, pid: r.pid }))];
    return parts.map(({ name, pid }) => ({ name, key: `${name}:${pid}`, ms: processCpuMs(pid) ?? Number.NaN }));
  }
}
