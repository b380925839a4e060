/**
 * Worker-thread entry of the one-time build of the decision state (see stateBuildThread.ts): a tiered ledger
 * writer started on its own connections, which builds and stores the state page by page, then ends.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { ledgerModel } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore, tieredState } from '@svc/ledger';
import { openDatabase } from '@svc/readmodel';
import type { StateBuildJob, StateBuildMessage } from './stateBuildThread';

const job = workerData as StateBuildJob;

async function build(): Promise<number> {
  const database = await openDatabase({ url: job.url, dataDir: job.dataDir, applicationName: 'svc-state-build', poolSize: 2 });
  try {
    const store = await new PostgresEventStore(database).init();
    const writer = new LedgerWriter(store, ledgerModel, {
      state: tieredState({ tier: store.stateTier(LEDGER_STREAM), hotKeys: job.hotKeys, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) }),
    });
    await writer.start();
    await store.close();
    return writer.head.seq;
  } finally {
    await database.close();
  }
}

build().then(
  (seq) => parentPort!.postMessage({ kind: 'done', seq, threadId } satisfies StateBuildMessage),
  (error: unknown) => parentPort!.postMessage({ kind: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies StateBuildMessage),
);
