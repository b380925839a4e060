import { sql } from 'kysely';
import type { UntrustedMark } from '@svc/domain';
import type { Migration } from '@svc/readmodel';

/** A mark as its jsonb column holds it: null for clean text. */
export function markColumn(mark: UntrustedMark | undefined): string | null {
  return mark ? JSON.stringify(mark) : null;
}

/** A row's mark as a reply shows it: a field only on marked text, so an ordinary reply reads as it always has. */
export function markField(value: unknown): { untrusted?: UntrustedMark } {
  if (value === null || value === undefined) return {};
  return { untrusted: (typeof value === 'string' ? JSON.parse(value) : value) as UntrustedMark };
}

/** Rows read per page when a migration marks the rows a read model already holds. */
const MARK_PAGE = 5000;

/**
 * Adds the `untrusted` column to a table and marks the rows it already holds with the rules of today, page by
 * page in key order, so a read model built before the rules existed need not be rebuilt to show its marks.
 */
export function untrustedColumnMigration(
  name: string,
  table: string,
  key: string,
  columns: readonly string[],
  markOf: (row: Record<string, unknown>) => UntrustedMark | undefined,
): Migration {
  return {
    name,
    async up(db, schema) {
      const t = sql.raw(`${schema}.${table}`);
      const k = sql.raw(key);
      await sql`alter table ${t} add column if not exists untrusted jsonb`.execute(db);
      let after = '';
      for (;;) {
        const { rows } = await sql<Record<string, unknown>>`select ${sql.raw([key, ...columns].join(', '))} from ${t} where ${k} > ${after} order by ${k} limit ${MARK_PAGE}`.execute(db);
        const marked = rows.flatMap((row) => {
          const mark = markOf(row);
          return mark ? [{ id: String(row[key]), mark: JSON.stringify(mark) }] : [];
        });
        if (marked.length > 0) {
          await sql`update ${t} set untrusted = m.mark::jsonb
            from (select unnest(${marked.map((m) => m.id)}::text[]) as id, unnest(${marked.map((m) => m.mark)}::text[]) as mark) m
            where ${t}.${k} = m.id`.execute(db);
        }
        const last = rows.at(-1);
        if (rows.length < MARK_PAGE || !last) return;
        after = String(last[key]);
      }
    },
  };
}
