import { startModuleWorker } from '@svc/ledger';

/** What the thread needs to open the event store's database on its own connections. */
export interface StateBuildJob {
  url: string;
  dataDir: string;
  hotKeys?: number;
}

export type StateBuildMessage = { kind: 'done'; seq: number; threadId: number } | { kind: 'failed'; message: string };

/**
 * Builds the ledger writer's stored decision state (the first start on a ledger kept before it was tiered, or
 * bulk-loaded) in a worker thread, as the writer would at start. The build allocates in proportion to the
 * ledger, and V8 keeps a heap it grew: in a thread of its own, that heap is given back when the thread ends.
 * Resolves to the head built and the thread it was built in.
 */
export function buildDecisionStateInWorker(job: StateBuildJob): Promise<{ seq: number; threadId: number }> {
  const worker = startModuleWorker(__dirname, 'stateBuildWorker', job, __filename.endsWith('.js'));
  return new Promise((resolve, reject) => {
    worker.once('message', (message: StateBuildMessage) => {
      if (message.kind === 'done') resolve({ seq: message.seq, threadId: message.threadId });
      else reject(new Error(`building the decision state failed: ${message.message}`));
    });
    worker.once('error', reject);
    // After a result this changes nothing.
    worker.once('exit', (code) => reject(new Error(`the decision state build thread exited with code ${code}`)));
  });
}
