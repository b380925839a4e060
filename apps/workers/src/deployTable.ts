import { lamportsToSol, type TableMaking } from '@svc/chain';
import type { Runtime } from '@svc/runtime';
import { WorkerLoop } from './loop';

/** How often an unfunded treasury's balance is looked at: one getBalance per process, until it can pay. */
const UNFUNDED_POLL_MS = 2_000;
/** Once the table is made, how often it is checked for shared keys a newer SDK names. */
const MADE_RECHECK_MS = 6 * 3_600_000;

export interface DeployTableTuning {
  /** How often an unfunded treasury is looked at again (default 2 s). */
  unfundedPollMs?: number;
}

export interface RunningDeployTable {
  /** Settles once the first attempt is over, whatever came of it. */
  readonly firstPass: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Makes the deploy lookup table at start once the treasury can pay for it, and keeps looking at the treasury's
 * balance until then, so that it is made within seconds of the treasury being funded, not by a caller's deploy.
 */
export async function startDeployTableWorker(runtime: Runtime, tuning: DeployTableTuning = {}): Promise<RunningDeployTable> {
  const { log } = runtime;
  const pollMs = tuning.unfundedPollMs ?? UNFUNDED_POLL_MS;
  let reported: TableMaking['made'] | undefined;
  // While the treasury is short, a pass reads only its balance: the whole attempt builds template deploys.
  let short: Extract<TableMaking, { made: false }> | undefined;
  let passed: () => void = () => {};
  const firstPass = new Promise<void>((resolve) => (passed = resolve));
  const loop = new WorkerLoop({
    name: 'deploy lookup table',
    log,
    retryMs: pollMs,
    async pass() {
      try {
        if (short && BigInt(await runtime.chain.connection.getBalance(short.payer, 'confirmed')) < short.needed) return pollMs;
        const outcome = await runtime.deployTable.ensure();
        short = outcome.made ? undefined : outcome;
        if (outcome.made !== reported) {
          if (outcome.made) log.info({ table: outcome.table.key.toBase58() }, 'deploy lookup table ready');
          else {
            log.warn(
              { treasury: outcome.payer.toBase58(), needed_sol: lamportsToSol(outcome.needed), available_sol: lamportsToSol(outcome.available) },
              'the treasury cannot pay for the deploy lookup table: deploys that need it answer 503 treasury_unfunded until it is funded',
            );
          }
          reported = outcome.made;
        }
        return outcome.made ? MADE_RECHECK_MS : pollMs;
      } finally {
        passed();
      }
    },
  });
  await loop.start();
  return { firstPass, stop: () => loop.stop() };
}
