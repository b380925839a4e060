import { execFile } from 'node:child_process';
import path from 'node:path';

const AUDIT_SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'audit.ts');

export interface AuditRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run audit -- <args>` as a child. Asynchronous on purpose: the server answering the audit lives in this process's event loop. */
export function runAudit(...args: string[]): Promise<AuditRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [require.resolve('tsx/cli'), AUDIT_SCRIPT, ...args], { timeout: 50_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
