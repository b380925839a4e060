import { sql, type Kysely } from 'kysely';
import { tempDir } from './env';
import type { EmbeddedService } from './servers';
import { startChild, type ChildService } from './spawn';

/** Every row of every table outside PostgreSQL's own schemas, as JSON text: where a leaked secret would show. */
export async function everyRow(db: Kysely<any>): Promise<{ tables: string[]; text: string }> {
  const found = await sql<{ schema: string; name: string }>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(db);
  const tables = found.rows.map((t) => `${t.schema}.${t.name}`);
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await sql<{ t: string | null }>`select string_agg(row_to_json(x)::text, ' ') as t from ${sql.table(table)} x`.execute(db);
    parts.push(rows.rows[0]?.t ?? '');
  }
  return { tables, text: parts.join('\n') };
}

/** Resolves once the process has logged a line holding `text`, as pino-http does when a response finishes. */
export function logged(service: ChildService, text: string): Promise<void> {
  const stream = service.child.stdout!;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!service.output.some((line) => line.includes(text))) return;
      stream.off('data', check);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      stream.off('data', check);
      reject(new Error(`no log line with ${text}`));
    }, 10_000);
    stream.on('data', check);
    check();
  });
}

/**
 * An API process of its own beside `service` (its database, Redis namespace and master key), logging at debug: a
 * service in the test's process logs to the test's stdout, and a child process's output is what a test can read.
 */
export function loggingApi(service: EmbeddedService, label: string): Promise<ChildService> {
  const { config } = service.server.services;
  return startChild('apps/api/src/main.ts', [], {
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    REDIS_PREFIX: config.redisPrefix,
    SERVICE_MASTER_KEY: config.serviceMasterKey,
    DATA_DIR: tempDir(label),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    RATE_LIMIT_RPS: '100000',
    REGISTER_PER_IP_PER_HOUR: '100000',
  });
}
