/**
 * The floor of a rebuild: the rows it made, written by COPY into empty tables of the same columns, with the same
 * indexes (primary keys and unique ones too) built after the load, on as many connections at once as the
 * rebuild uses. No rebuild can do less to the database than that, so rebuild time / floor time says how much of
 * a rebuild is anything but writing its result.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { quoteIdent } from '@svc/readmodel';

export interface RebuildFloor {
  tables: number;
  rows: number;
  indexes: number;
  /** COPY of every table's rows into its empty copy. */
  copyMs: number;
  /** Every index built over the loaded rows. */
  indexMs: number;
  /** copyMs + indexMs. */
  floorMs: number;
}

/** Runs `work` over `items`, `lanes` at a time, each lane on a connection of its own. */
async function onConnections<T>(url: string, items: readonly T[], lanes: number, work: (client: pg.Client, item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    const client = new pg.Client({ connectionString: url, application_name: 'bench-rebuild-floor' });
    await client.connect();
    try {
      // As the rebuild's load and index builds run.
      await client.query(`set synchronous_commit = off; set maintenance_work_mem = '256MB'`);
      while (next < items.length) await work(client, items[next++]!);
    } finally {
      await client.end();
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

/**
 * Measures the floor of the rebuilt schema `schema` in a scratch schema beside it (dropped after): its tables
 * are first dumped to files, unmeasured, then loaded and indexed, measured, the biggest tables first.
 */
export async function measureRebuildFloor(url: string, schema: string, lanes: number): Promise<RebuildFloor> {
  const floor = `${schema}_floor`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-rebuild-floor-'));
  const admin = new pg.Client({ connectionString: url, application_name: 'bench-rebuild-floor' });
  await admin.connect();
  try {
    const { rows: tables } = await admin.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and c.relkind = 'r' order by pg_total_relation_size(c.oid) desc`,
      [schema],
    );
    const { rows: indexes } = await admin.query<{ definition: string }>(
      `select pg_get_indexdef(i.indexrelid) as definition from pg_index i
         join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 order by pg_relation_size(i.indrelid) desc, c.relname`,
      [schema],
    );
    const [from, to] = [quoteIdent(schema), quoteIdent(floor)];
    await admin.query(`drop schema if exists ${to} cascade; create schema ${to}`);
    for (const { name } of tables) await admin.query(`create table ${to}.${quoteIdent(name)} (like ${from}.${quoteIdent(name)} including defaults)`);
    const file = (name: string) => path.join(dir, `${name}.copy`);
    await onConnections(url, tables, lanes, (client, { name }) => pipeline(client.query(copyTo(`copy ${from}.${quoteIdent(name)} to stdout`)), fs.createWriteStream(file(name))));
    let rows = 0;
    let t0 = performance.now();
    await onConnections(url, tables, lanes, async (client, { name }) => {
      const copy = client.query(copyFrom(`copy ${to}.${quoteIdent(name)} from stdin`));
      await pipeline(fs.createReadStream(file(name), { highWaterMark: 1 << 20 }), copy);
      rows += Number(copy.rowCount);
    });
    const copyMs = performance.now() - t0;
    // The same definitions, moved to the scratch schema: `ON <schema>.<table>` is the one place it is named
    // (quoted or not, as PostgreSQL prints it).
    const named = new RegExp(` ON (ONLY )?(${schema}|"${schema}")\\.`);
    const onFloor = indexes.map(({ definition }) => {
      if (!named.test(definition)) throw new Error(`an index of another schema: ${definition}`);
      return definition.replace(named, ` ON $1${to}.`);
    });
    t0 = performance.now();
    await onConnections(url, onFloor, lanes, async (client, definition) => void (await client.query(definition)));
    const indexMs = performance.now() - t0;
    return { tables: tables.length, rows, indexes: indexes.length, copyMs, indexMs, floorMs: copyMs + indexMs };
  } finally {
    await admin.query(`drop schema if exists ${quoteIdent(floor)} cascade`).catch(() => undefined);
    await admin.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
