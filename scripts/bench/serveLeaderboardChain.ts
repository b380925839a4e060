import { startLocalnet } from '@svc/app-localnet';
import { jupiterRoutes, stablecoinSeed } from '../../apps/localnet/src/jupiter';
import { emulatedPrograms } from '../../apps/localnet/src/programs';
import { portfolioSeed } from '../../test/support/portfolios';
import { failStartup, serveUntilStopped } from './childSide';
import { SOL_USD, leaderboardWorld } from './leaderboardWorld';

// The bundled chain in its own process, its genesis holding the benchmark's world (BENCH_WORLD: citizens,coins,seed).
const [citizens, coins, seed] = (process.env.BENCH_WORLD ?? '').split(',');
const world = leaderboardWorld(Number(citizens), Number(coins), seed!);
startLocalnet({
  port: 0,
  dataDir: null,
  programs: emulatedPrograms(),
  seeds: [stablecoinSeed({ solUsd: SOL_USD }), portfolioSeed(world.coins, world.wallets)],
  routes: [jupiterRoutes({ solUsd: SOL_USD })],
  graduationKeeper: false,
})
  .then((net) => serveUntilStopped(Number(new URL(net.rpcUrl).port), () => net.close(), { ws: net.wsUrl }))
  .catch(failStartup);
