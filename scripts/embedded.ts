import { startBundledLocalnet, type Localnet } from '@svc/app-localnet';
import { startProjector, type RunningProjector } from '@svc/app-projector';
import { startWorkers, type RunningWorkers, type WorkersOptions } from '@svc/app-workers';
import type { Config } from '@svc/config';
import { LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { TREASURY_WALLET, buildRuntime, connectChain, createLogger } from '@svc/runtime';
import { startServer, type RunningApi } from '../apps/api/src/server';

export type EmbeddedOptions = WorkersOptions;

export interface RunningServer extends RunningApi {
  projector: RunningProjector;
  workers: RunningWorkers;
  /** The bundled chain, when this process runs it (SOLANA_RPC_URL unset). */
  localnet?: Localnet;
}

/**
 * The whole service in one process, on one runtime: the bundled local chain (when SOLANA_RPC_URL is
 * unset), the projector, the workers and the API. `npm start` runs this; so do the e2e tests.
 */
export async function startEmbedded(config: Config, options: EmbeddedOptions = {}): Promise<RunningServer> {
  const log = createLogger(config, 'svc');
  // Opened first: on the embedded database its lock refuses a second process before it touches the chain's files.
  const runtime = await buildRuntime(config, log, { applicationName: 'svc-embedded' });
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
    if (!config.solanaRpcUrl) {
      localnet = await startBundledLocalnet({
        port: config.localnetPort,
        host: '127.0.0.1',
        dataDir: config.dataDir,
        solUsd: config.localnetSolUsd,
        onError: (error) => log.error({ err: error }, 'localnet internal error'),
      });
      await runtime.chain.close();
      runtime.chain = connectChain(config, localnet);
      // On the bundled chain the faucet keeps the treasury funded: it pays for the deploy lookup table and,
      // as a fee-share holder, must hold at least rent for distributions to reach it.
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
    const api = await startServer(config, { runtime });
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
