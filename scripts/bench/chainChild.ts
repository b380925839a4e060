import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../test/support/env';
import { startChild, type Child } from './children';
import type { Cleanup } from './cleanup';

const ATTEMPTS = 5;

/**
 * The bundled chain in a process of its own (scripts/bench/serveLocalnet.ts), on a fixed port so that a service
 * given only SOLANA_RPC_URL finds its WebSocket on the next one, as with solana-test-validator. A port pair
 * already taken is tried again elsewhere.
 */
export async function startChainChild(cleanup: Cleanup, root: string): Promise<Child> {
  const dataDir = tempDir('bench-chain');
  cleanup.add('remove the chain data directory', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  for (let attempt = 1; ; attempt++) {
    const port = 20_000 + 2 * Math.floor(Math.random() * 10_000);
    try {
      const child = await startChild({
        name: 'chain',
        entry: path.join(root, 'scripts/bench/serveLocalnet.ts'),
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir, BENCH_LOCALNET_PORT: String(port) },
      });
      cleanup.add('stop the chain', () => child.stop());
      return child;
    } catch (error) {
      if (attempt >= ATTEMPTS) throw error;
    }
  }
}

/** A process's resident set, MB, from /proc; NaN off Linux or once it is gone. */
export function rssMbOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
