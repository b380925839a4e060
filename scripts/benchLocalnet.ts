/**
 * `npm run bench:localnet`: two ratios, each against a baseline measured in the same run.
 * 1. Send-and-confirm of SOL transfers through the bundled chain over HTTP + WebSocket (web3.js, 32
 *    concurrent senders, the chain in its own process with its write-ahead log on) against raw LiteSVM
 *    executing the same kind of signed transfers in-process.
 * 2. An emulated pump curve buy against a plain SPL token transfer, both sent through the same in-process
 *    chain (signature checks, fees, history; no HTTP), one at a time.
 * BENCH_SECONDS (5) per measurement, BENCH_ROUNDS (2) alternated; medians reported. Writes .bench/localnet-<timestamp>.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Account, LiteSvm } from 'litesvm/dist/internal';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  SystemProgram,
} from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotentInstruction, createInitializeMint2Instruction, createMintToInstruction, createTransferInstruction, getAssociatedTokenAddressSync, MINT_SIZE, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { LocalChain } from '../apps/localnet/src/chain/localChain';
import { emulatedPrograms } from '../apps/localnet/src/programs';
import { tempDir } from '../test/support/env';
import { closeConnection } from '../test/support/localnet';
import { startChild } from './bench/children';
import { distribution, median } from './bench/stats';
import { signWire } from './bench/localnetTx';
import { pumpBuyFixture } from './bench/pumpBuy';

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SENDERS = 32;
const PRESIGNED_PER_SENDER = 400;

// ---- 1. transfers: raw LiteSVM vs send-and-confirm over HTTP -----------------------------------------

function rawTransfers(seconds: number): number {
  const svm = new LiteSvm();
  const payer = Keypair.generate();
  svm.setAccount(payer.publicKey.toBytes(), new Account(1_000_000n * BigInt(LAMPORTS_PER_SOL), new Uint8Array(0), SystemProgram.programId.toBytes(), false, 0n));
  const to = Keypair.generate().publicKey;
  let executed = 0;
  let busyMs = 0;
  let lamports = 1_000_000;
  while (busyMs < seconds * 1000) {
    // Signing is the client's work on both sides, so it stays outside the timed part.
    const blockhash = svm.latestBlockhash();
    const batch = Array.from({ length: 500 }, () => signWire(payer, blockhash, [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: lamports++ })]));
    const started = performance.now();
    for (const bytes of batch) {
      const result = svm.sendLegacyTransaction(bytes) as { err?: () => unknown };
      if (result.err) throw new Error(`raw transfer failed: ${String(result.err())}`);
    }
    busyMs += performance.now() - started;
    executed += batch.length;
  }
  return executed / (busyMs / 1000);
}

function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function httpTransfers(seconds: number) {
  const child = await startChild({ name: 'localnet', entry: path.join(ROOT, 'scripts/bench/serveLocalnet.ts'), cwd: ROOT, env: { ...process.env, DATA_DIR: tempDir('bench-localnet') } });
  // web3.js may still have a status or block-height poll in flight when the load ends; the chain stops after it.
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const countingFetch: typeof fetch = async (input, init) => {
    inFlight++;
    try {
      return await fetch(input, init);
    } finally {
      if (--inFlight === 0) drained?.();
    }
  };
  const connection = new Connection(child.url, { commitment: 'confirmed', wsEndpoint: String(child.ready.ws), fetch: countingFetch });
  try {
    const payers = await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        const payer = Keypair.generate();
        const signature = await connection.requestAirdrop(payer.publicKey, 1000 * LAMPORTS_PER_SOL);
        await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) });
        return payer;
      }),
    );
    const to = Keypair.generate().publicKey;
    const latencies: number[] = [];
    // Signed before the clock starts, as for the raw baseline: the client's signing is not the chain's cost.
    const latest = await connection.getLatestBlockhash();
    let lamports = 1_000_000;
    const signed = payers.map((payer) =>
      Array.from({ length: PRESIGNED_PER_SENDER }, () => signWire(payer, latest.blockhash, [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: lamports++ })])),
    );
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    const clientCpu = process.cpuUsage();
    const serverCpu = cpuSeconds(child.pid);
    await Promise.all(
      signed.map(async (wires) => {
        for (const wire of wires) {
          if (performance.now() >= deadline) return;
          const t0 = performance.now();
          const signature = await connection.sendRawTransaction(wire);
          const confirmed = await connection.confirmTransaction({ signature, ...latest });
          if (confirmed.value.err) throw new Error(`transfer failed: ${JSON.stringify(confirmed.value.err)}`);
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientCpu);
    return {
      tps: latencies.length / elapsed,
      latency: distribution(latencies),
      // Where the time goes: CPU seconds per wall second of the sending client (web3.js) and of the chain process.
      clientCpu: (client.user + client.system) / 1e6 / elapsed,
      serverCpu: (cpuSeconds(child.pid) - serverCpu) / elapsed,
    };
  } finally {
    if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    await closeConnection(connection);
    await child.stop();
  }
}

// ---- 2. emulated curve buy vs SPL transfer, in-process ---------------------------------------------

async function splTransfers(chain: LocalChain, seconds: number): Promise<number> {
  const owner = Keypair.generate();
  await chain.airdrop(owner.publicKey, 100n * BigInt(LAMPORTS_PER_SOL));
  const mint = Keypair.generate();
  const mine = getAssociatedTokenAddressSync(mint.publicKey, owner.publicKey);
  const recipientOwner = Keypair.generate().publicKey;
  const recipient = getAssociatedTokenAddressSync(mint.publicKey, recipientOwner);
  await chain.sendAsLocalnet(
    [
      SystemProgram.createAccount({ fromPubkey: owner.publicKey, newAccountPubkey: mint.publicKey, lamports: Number(chain.rentExempt(MINT_SIZE)), space: MINT_SIZE, programId: TOKEN_PROGRAM_ID }),
      createInitializeMint2Instruction(mint.publicKey, 6, owner.publicKey, null),
      createAssociatedTokenAccountIdempotentInstruction(owner.publicKey, mine, owner.publicKey, mint.publicKey),
      createAssociatedTokenAccountIdempotentInstruction(owner.publicKey, recipient, recipientOwner, mint.publicKey),
      createMintToInstruction(mint.publicKey, mine, owner.publicKey, 1n << 60n),
    ],
    [owner, mint],
  );
  let amount = 1n;
  return timeSends(chain, seconds, (blockhash) => signWire(owner, blockhash, [createTransferInstruction(mine, recipient, owner.publicKey, amount++)]));
}

/** Sends one signed transaction at a time; only the chain's send is timed. */
async function timeSends(chain: LocalChain, seconds: number, next: (blockhash: string) => Buffer | Promise<Buffer>): Promise<number> {
  let busyMs = 0;
  let count = 0;
  while (busyMs < seconds * 1000) {
    const wire = await next(chain.latestBlockhash().blockhash);
    const started = performance.now();
    await chain.send(wire);
    busyMs += performance.now() - started;
    count++;
  }
  return count / (busyMs / 1000);
}

async function main(): Promise<void> {
  const rounds: Record<string, number | object>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const raw = rawTransfers(SECONDS);
    const http = await httpTransfers(SECONDS);
    const chain = await LocalChain.open({ dataDir: null, programs: emulatedPrograms() });
    const spl = await splTransfers(chain, SECONDS);
    const buy = await pumpBuyFixture(chain).then((fixture) => timeSends(chain, SECONDS, fixture.next));
    await chain.close();
    const figures = { round, rawTps: raw, httpTps: http.tps, httpLatency: http.latency, clientCpu: http.clientCpu, serverCpu: http.serverCpu, splTps: spl, buyTps: buy };
    rounds.push(figures);
    console.log(
      `round ${round}: raw LiteSVM ${raw.toFixed(0)} tx/s | HTTP send+confirm ${http.tps.toFixed(0)} tx/s (p50 ${http.latency.p50.toFixed(1)} ms, p99 ${http.latency.p99.toFixed(1)} ms; CPU client ${http.clientCpu.toFixed(2)}, chain ${http.serverCpu.toFixed(2)}) | SPL transfer ${spl.toFixed(0)} tx/s | curve buy ${buy.toFixed(0)} tx/s`,
    );
  }
  const m = (key: string) => median(rounds.map((r) => r[key] as number));
  const summary = {
    transfers: { rawTps: m('rawTps'), httpTps: m('httpTps'), ratio: m('httpTps') / m('rawTps') },
    curveBuy: { splTps: m('splTps'), buyTps: m('buyTps'), ratio: m('buyTps') / m('splTps') },
  };
  console.log(`\nmedians over ${ROUNDS} rounds of ${SECONDS} s:`);
  console.log(`  send-and-confirm over HTTP / raw LiteSVM execution: ${summary.transfers.httpTps.toFixed(0)} / ${summary.transfers.rawTps.toFixed(0)} tx/s = ${summary.transfers.ratio.toFixed(3)}x`);
  console.log(`  emulated curve buy / SPL token transfer (in-process chain): ${summary.curveBuy.buyTps.toFixed(0)} / ${summary.curveBuy.splTps.toFixed(0)} tx/s = ${summary.curveBuy.ratio.toFixed(3)}x`);
  const out = path.join(ROOT, '.bench');
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, `localnet-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify({ seconds: SECONDS, senders: SENDERS, rounds, summary }, null, 2));
  console.log(`\nwrote ${path.relative(ROOT, file)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
