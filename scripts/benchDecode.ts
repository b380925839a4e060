/**
 * `npm run bench:decode`: the CPU of the two RPC answers every trade reads, decoded by the service's Connection
 * (ServiceConnection) against web3.js's own, on the same in-process chain: a market read (getMultipleAccounts of 8
 * keys: pump's Global and fee config, a mint, a wallet, and four addresses with no account, as a first buy's token
 * accounts have none) and a confirmation's status read (getSignatureStatuses of one landed signature). CPU counts
 * this process: the client's decoding and the chain's answer alike. BENCH_CALLS (400) per round, BENCH_ROUNDS (5)
 * alternated; medians reported. Writes .bench/decode-<timestamp>.json.
 */
import path from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { createMint } from '@solana/spl-token';
import { GLOBAL_PDA, PUMP_FEE_CONFIG_PDA } from '@pump-fun/pump-sdk';
import { ServiceConnection, rpcFetch } from '@svc/chain';
import { emulatedPrograms } from '../apps/localnet/src/programs';
import { closeConnection, localnet } from '../test/support/localnet';
import { machineNow, writeFigures } from './bench/pairs';
import { fixed, table } from './bench/report';
import { setting } from './bench/settings';
import { median } from './bench/stats';

const ROOT = path.resolve(__dirname, '..');
const CALLS = Math.floor(setting('BENCH_CALLS', 400, 10));
const ROUNDS = Math.floor(setting('BENCH_ROUNDS', 5, 1));

async function cpuPerCall(read: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await read();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / CALLS;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const machine = machineNow();
  const t = await localnet({ programs: emulatedPrograms() });
  const sides = {
    'web3.js Connection (baseline)': new Connection(t.connection.rpcEndpoint, { commitment: 'confirmed', fetch: rpcFetch }),
    ServiceConnection: new ServiceConnection(t.connection.rpcEndpoint, { commitment: 'confirmed', fetch: rpcFetch }),
  };
  try {
    const wallet = await t.funded(2);
    const mint = await createMint(t.connection, wallet, wallet.publicKey, null, 6);
    const keys = [mint, GLOBAL_PDA, PUMP_FEE_CONFIG_PDA, wallet.publicKey, ...Array.from({ length: 4 }, () => Keypair.generate().publicKey)];
    const transfer = SystemProgram.transfer({ fromPubkey: wallet.publicKey, toPubkey: Keypair.generate().publicKey, lamports: LAMPORTS_PER_SOL / 10 });
    const signature = await sendAndConfirmTransaction(t.connection, new Transaction().add(transfer), [wallet]);
    const reads = {
      [`getMultipleAccountsInfo, ${keys.length} keys`]: (connection: Connection) => connection.getMultipleAccountsInfo(keys, 'confirmed'),
      'getSignatureStatuses, 1 signature': (connection: Connection) => connection.getSignatureStatuses([signature]),
    };
    const rows: string[][] = [];
    const figures: Record<string, { baseline: number[]; service: number[]; ratio: number }> = {};
    for (const [name, read] of Object.entries(reads)) {
      const [baseline, service] = Object.values(sides).map((connection) => () => read(connection));
      // Both paths warmed up (JIT, kept-alive connection) before anything counts.
      await cpuPerCall(baseline!);
      await cpuPerCall(service!);
      const measured = { baseline: [] as number[], service: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        measured.baseline.push(await cpuPerCall(baseline!));
        measured.service.push(await cpuPerCall(service!));
      }
      const ratio = median(measured.service) / median(measured.baseline);
      figures[name] = { ...measured, ratio };
      for (const [side, values] of [[Object.keys(sides)[0]!, measured.baseline], [Object.keys(sides)[1]!, measured.service]] as const) {
        rows.push([name, side, fixed(median(values), 3), values.map((n) => fixed(n, 3)).join(' ')]);
      }
      rows.push([name, 'ServiceConnection / web3.js', `${fixed(ratio, 2)}x`, '']);
    }
    process.stdout.write(
      `\nthe RPC answers a trade reads, CPU per call of this process (client and in-process chain), ${ROUNDS} rounds of ${CALLS} calls alternated; ` +
        `${machine.cpus} CPUs, load average ${machine.loadAverage.join(' ')}, node ${process.version}\n\n` +
        table(['read', 'decoded by', 'CPU ms per call (median)', 'rounds'], rows) +
        '\n',
    );
    const [marketRead, statusRead] = Object.values(figures).map((f) => f.ratio);
    const file = writeFigures(ROOT, 'decode', startedAt, { machine, calls: CALLS, rounds: ROUNDS, cpuMsPerCall: figures, ratios: { marketRead, statusRead } });
    process.stdout.write(`figures written to ${path.relative(ROOT, file)}\n`);
  } finally {
    await Promise.all(Object.values(sides).map(closeConnection));
    await t.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
