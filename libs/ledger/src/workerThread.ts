import path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the module `name` of `dir` (a sibling of the caller, given without extension). When
 * the service runs from source (tsx, jest) the module is TypeScript, and a worker thread inherits no loader
 * hooks on Node 20, so it registers tsx's require hook first.
 */
export function startModuleWorker(dir: string, name: string, workerData: unknown, compiled: boolean): Worker {
  const entry = path.join(dir, compiled ? `${name}.js` : `${name}.ts`);
  if (compiled) return new Worker(entry, { workerData });
  const tsx = require.resolve('tsx/cjs/api');
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`, { eval: true, workerData });
}
