import { sql, type Kysely } from 'kysely';
import type { ChildService } from './spawn';

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
