import fs from 'node:fs';
import { startBundledLocalnet, type Localnet } from '@svc/app-localnet';
import { startProjector, type RunningProjector } from '@svc/app-projector';
import { startWorkers, type RunningWorkers, type WorkersOptions } from '@svc/app-workers';
import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { announces } from '@svc/projections';
import type { Config } from '@svc/config';
import { LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { DATA_DIR_MODE } from '@svc/vault';
import { TREASURY_WALLET, buildRuntime, connectChain, createLogger, ensureServiceToken, ensureTreasuryCitizen } from '@svc/runtime';
import { startServer, type RunningApi } from '../apps/api/src/server';

export interface EmbeddedOptions extends WorkersOptions {
  /** The clock that times how long a reply's secrets are replayed and the faucet's hour (tests move it). */
  clock?: () => number;
  /** The bundled chain's graduation keeper; off, complete curves wait for a `migrate` someone else sends. */
  graduationKeeper?: boolean;
}

export interface RunningServer extends RunningApi {
  projector: RunningProjector;
  workers: RunningWorkers;
  /** The bundled chain, when this process runs it (SOLANA_RPC_URL unset). */
  localnet?: Localnet;
}

/** Follows the projector's announcements on the bus from now: `past` resolves once one reached `seq` (or `ms` passed). */
async function announcements(bus: Bus): Promise<{ past(seq: number, ms: number): Promise<void> }> {
  let announced = -1;
  let wake: () => void = () => {};
  const unsubscribe = await bus.subscribe(PROJECTED_CHANNEL, (message) => {
    // What /ws pushes comes from the entries read model.
    if (!announces(message, ['entries'])) return;
    announced = Math.max(announced, message.seq);
    wake();
  });
  return {
    async past(seq, ms) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          if (announced < seq) return;
          clearTimeout(timer);
          resolve();
        };
        wake();
      });
      await unsubscribe();
    },
  };
}

/**
 * The whole service in one process, on one runtime: the bundled local chain (when SOLANA_RPC_URL is
 * unset), the projector, the workers and the API. `npm start` runs this; so do the e2e tests.
 */
export async function startEmbedded(config: Config, options: EmbeddedOptions = {}): Promise<RunningServer> {
  const log = createLogger(config, 'svc');
  fs.mkdirSync(config.dataDir, { recursive: true, mode: DATA_DIR_MODE });
  // Opened first: on the embedded database its lock refuses a second process before it touches the chain's files.
  const runtime = await buildRuntime(config, log, { applicationName: 'svc-embedded', clock: options.clock });
  let localnet: Localnet | undefined;
  let projector: RunningProjector | undefined;
  let workers: RunningWorkers | undefined;
  // The loops before the projector, the projector before the runtime, the runtime before the chain it talks to.
  const stopBackground = async () => {
    await workers?.stop();
    await projector?.stop();
    await runtime.close();
    await localnet?.close();
  };
  try {
    // Before anything else writes: on a new ledger, @treasury is its first citizen.
    await ensureTreasuryCitizen(runtime);
    if (!config.solanaRpcUrl) {
      localnet = await startBundledLocalnet({
        port: config.localnetPort,
        host: '127.0.0.1',
        dataDir: config.dataDir,
        solUsd: config.localnetSolUsd,
        onError: (error) => log.error({ err: error }, 'localnet internal error'),
        graduationKeeper: options.graduationKeeper,
      });
      await runtime.chain.close();
      runtime.chain = connectChain(config, localnet);
      // On the bundled chain the faucet keeps the treasury funded: it pays for the deploy lookup table (made by the
      // workers) and, as a fee-share holder, must hold at least rent for distributions to reach it.
      const treasury = new PublicKey((await runtime.serviceWallets.wallet(TREASURY_WALLET)).publicKey);
      if ((await runtime.chain.connection.getBalance(treasury, 'confirmed')) < LAMPORTS_PER_SOL) await localnet.chain.airdrop(treasury, 10n * BigInt(LAMPORTS_PER_SOL));
    }
    projector = await startProjector({
      database: runtime.database,
      store: runtime.store,
      bus: runtime.bus,
      schema: config.readModelSchema,
      batchSize: config.projectorBatchSize,
      log,
    });
    workers = await startWorkers(runtime, options);
    // A funded treasury's table is there before the first request, as the service token is: no deploy finds it missing.
    await workers.deployTable.firstPass;
    const api = await startServer(config, { runtime });
    // After the API listens: the token's metadata is hosted at the public URL, which names the port it took.
    if (localnet && !config.treasuryTokenMint) {
      const announced = await announcements(runtime.bus);
      const before = runtime.writer.head.seq;
      await ensureServiceToken(runtime).catch((err) => log.error({ err }, 'the service token could not be deployed; the treasury buys nothing until TREASURY_TOKEN_MINT is set'));
      // A /ws client that connects once the start returns is pushed what comes after it, not the deploy.
      await announced.past(runtime.writer.head.seq > before ? runtime.writer.head.seq : -1, config.readYourWritesMs);
    }
    let closing: Promise<void> | undefined;
    return {
      ...api,
      projector,
      workers,
      localnet,
      close() {
        closing ??= (async () => {
          // The API first: /ws, held long-polls and HTTP, so nothing new arrives while the rest stops.
          await api.close();
          await stopBackground();
        })();
        return closing;
      },
    };
  } catch (error) {
    await stopBackground().catch((err) => log.warn({ err }, 'stopping after a failed start'));
    throw error;
  }
}
