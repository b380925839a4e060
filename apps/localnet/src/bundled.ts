import { BUNDLED_CHAIN_FIELD, type BundledChainIdentity } from '@svc/contracts';
import { startLocalnet, type Localnet } from './server';
import { jupiterRoutes, stablecoinSeed } from './jupiter';
import { emulatedPrograms } from './programs';

export interface BundledOptions {
  port: number;
  host?: string;
  dataDir: string | null;
  solUsd: number;
  onError?: (error: unknown) => void;
  /** Off: complete curves stay unmigrated until someone sends `migrate` (tests hold a coin between curve and pool). */
  graduationKeeper?: boolean;
}

/**
 * The local chain as `npm start` and `npm run localnet` run it: every emulated venue, seeded tokens, the aggregator API
 * and the graduation keeper (on because both pump and PumpSwap are emulated).
 */
export function startBundledLocalnet(options: BundledOptions): Promise<Localnet> {
  const started = startLocalnet({
    port: options.port,
    host: options.host,
    dataDir: options.dataDir,
    programs: emulatedPrograms(),
    seeds: [stablecoinSeed({ solUsd: options.solUsd })],
    routes: [jupiterRoutes({ solUsd: options.solUsd })],
    identity: { [BUNDLED_CHAIN_FIELD]: { serves: ['price', 'swap'] } satisfies BundledChainIdentity },
    onError: options.onError,
    graduationKeeper: options.graduationKeeper,
  });
  return started.catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    throw new Error(
      `the local chain cannot listen on port ${options.port} or ${options.port + 1} (in use): set LOCALNET_PORT to free ports, ` +
        'or SOLANA_RPC_URL to use a chain that is already running',
    );
  });
}
