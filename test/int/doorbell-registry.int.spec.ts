import { createHmac, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { entries } from '@svc/projections';
import { migrate, type SqlDatabase } from '@svc/readmodel';
import { DoorbellStore, MUTE_AFTER_FAILURES, doorbellMigrations, seal } from '@svc/vault';
import { timestampedSignature, type DoorbellReceiver } from '../support/doorbellReceiver';
import { AGENT, DoorbellRig, MASTER_KEY, OTHER_AGENT, SECRETS } from '../support/doorbellRig';

jest.setTimeout(30_000);

/** What the registry keeps of a doorbell: at most three a citizen, and its URL sealed, so no table holds a token the URL carries. */
describe('the doorbell registry against PostgreSQL and a real HTTPS receiver', () => {
  const rig = new DoorbellRig();
  const { logLines, attempts, announce, post, worker, register, stopWorkers, delivered } = rig;
  let database: SqlDatabase;
  let store: DoorbellStore;
  let receiver: DoorbellReceiver;

  beforeAll(async () => {
    ({ database, store, receiver } = await rig.start('doorbell_registry'));
  }, 30_000);
  afterEach(() => rig.reset());
  afterAll(() => rig.close());

  /** Every column of every table in the database (schema.table.column) with a value that contains one of `needles`. */
  async function columnsHolding(needles: string[]): Promise<string[]> {
    const tables = await sql<{ table_schema: string; table_name: string }>`
      select table_schema, table_name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(database.db);
    expect(tables.rows.filter((t) => t.table_schema === 'vault').map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['doorbells', 'doorbell_deliveries', 'doorbell_attempts', 'doorbell_fanout']),
    );
    const found = new Set<string>();
    for (const { table_schema, table_name } of tables.rows) {
      const rows = await sql<{ row: Record<string, unknown> }>`select row_to_json(r) as row from ${sql.table(`${table_schema}.${table_name}`)} r`.execute(database.db);
      for (const { row } of rows.rows) {
        for (const [column, value] of Object.entries(row)) {
          const text = typeof value === 'string' ? value : JSON.stringify(value);
          if (needles.some((needle) => text.includes(needle))) found.add(`${table_schema}.${table_name}.${column}`);
        }
      }
    }
    return [...found].sort();
  }

  it('holds the cap of 3 under concurrent registrations, and re-registering a URL neither counts nor keeps it muted', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.register({ agentId: AGENT, url: receiver.url(`/cap${i}`), kinds: ['post'], ledgerHead: rig.seq, limit: 3 })),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    const mine = await store.list(AGENT);
    expect(mine).toHaveLength(3);
    await database.db.updateTable('vault.doorbells').set({ muted: true, failures: 10 }).where('id', '=', mine[0]!.id).execute();
    const again = await store.register({ agentId: AGENT, url: mine[0]!.url, kinds: ['bounty'], secret: 'new', ledgerHead: rig.seq, limit: 3 });
    expect(again).toMatchObject({ ok: true, created: false, doorbell: { id: mine[0]!.id, muted: false, failures: 0, kinds: ['bounty'], hasSecret: true } });
    expect(await store.list(AGENT)).toHaveLength(3);
  });

  it('seals a URL that carries a token: no table holds the token, yet its owner lists it, it is rung, the same URL again is the same doorbell (unmuted), and removal by URL finds it', async () => {
    const token = `SECRET${randomBytes(12).toString('hex')}`;
    const path = `/tokened?token=${token}`;
    const url = receiver.url(path);
    const doorbell = await register(path, { kinds: ['post'], secret: SECRETS[0] });
    expect(doorbell.url).toBe(url);
    const postSeq = await post(1400);
    await worker();
    await announce();
    await receiver.waitFor(() => receiver.on(path).length === 1);
    expect(receiver.on(path)[0]!.json.seq).toBe(postSeq);
    await attempts.waitFor(() => delivered(doorbell.id).length === 1);

    expect(await columnsHolding([token, Buffer.from(token).toString('base64'), Buffer.from(token).toString('hex')])).toEqual([]);
    expect(logLines.join('\n')).not.toContain(token);
    expect((await store.list(AGENT)).map((d) => d.url)).toEqual([url]);
    expect(await store.list(OTHER_AGENT)).toEqual([]);

    await database.db.updateTable('vault.doorbells').set({ muted: true, failures: MUTE_AFTER_FAILURES }).where('id', '=', doorbell.id).execute();
    const again = await store.register({ agentId: AGENT, url, kinds: ['post'], ledgerHead: rig.seq, limit: 3 });
    expect(again).toMatchObject({ ok: true, created: false, doorbell: { id: doorbell.id, url, muted: false, failures: 0 } });
    expect(await store.list(AGENT)).toHaveLength(1);
    // The same URL registered by another citizen is a doorbell of theirs, which removing ours leaves alone.
    const theirs = await store.register({ agentId: OTHER_AGENT, url, kinds: ['post'], ledgerHead: rig.seq, limit: 3 });
    expect(theirs).toMatchObject({ ok: true, created: true });
    expect(await store.remove(AGENT, { url })).toEqual({ id: doorbell.id, url });
    expect(await store.list(AGENT)).toEqual([]);
    expect(await store.remove(AGENT, { url })).toBeUndefined();
    expect((await store.list(OTHER_AGENT)).map((d) => d.url)).toEqual([url]);
  });

  it('seals at init, batch by batch, the plaintext URLs a release before stored, then drops their column; starts at once share the work', async () => {
    const legacy = 'vault_legacy';
    // The schema as the release before sealed URLs left it: its migrations, which never change once shipped.
    await migrate(database.db, legacy, doorbellMigrations.slice(0, 2));
    const token = `SECRET${randomBytes(12).toString('hex')}`;
    const path = `/legacy?token=${token}`;
    const url = receiver.url(path);
    const otherUrl = (n: number) => `https://example.com/${n}?token=${token}`;
    try {
      await sql`
        insert into ${sql.table(`${legacy}.doorbells`)} (id, agent_id, url, kinds, after_seq, created_at, updated_at)
        values ('door_LEGACY', ${AGENT}, ${url}, 'post', ${rig.seq}, 0, 0)`.execute(database.db);
      // More than one batch.
      await sql`
        insert into ${sql.table(`${legacy}.doorbells`)} (id, agent_id, url, kinds, after_seq, created_at, updated_at)
        select 'door_OLD' || lpad(n::text, 18, '0'), 'agent_old_' || n, 'https://example.com/' || n || '?token=' || ${token}, 'action', ${rig.seq}, 0, 0
          from generate_series(1, 1200) as n`.execute(database.db);
      expect(await columnsHolding([token])).toEqual([`${legacy}.doorbells.url`]);

      const [first, second] = await Promise.all([1, 2].map(() => new DoorbellStore(database, MASTER_KEY, entries.inSchema('rm'), legacy).init()));
      expect(await columnsHolding([token])).toEqual([]);
      const columns = await sql<{ column_name: string; is_nullable: string }>`
        select column_name, is_nullable from information_schema.columns where table_schema = ${legacy} and table_name = 'doorbells' and column_name like 'url%'
         order by column_name`.execute(database.db);
      expect(columns.rows).toEqual([
        { column_name: 'url_hash', is_nullable: 'NO' },
        { column_name: 'url_sealed', is_nullable: 'NO' },
      ]);

      expect((await first!.list(AGENT)).map((d) => [d.id, d.url])).toEqual([['door_LEGACY', url]]);
      expect((await second!.list('agent_old_7')).map((d) => d.url)).toEqual([otherUrl(7)]);
      expect(await second!.register({ agentId: AGENT, url, kinds: ['post'], ledgerHead: rig.seq, limit: 3 })).toMatchObject({ ok: true, created: false, doorbell: { id: 'door_LEGACY', url } });
      expect(await first!.remove('agent_old_7', { url: otherUrl(7) })).toEqual({ id: 'door_OLD000000000000000007', url: otherUrl(7) });

      const postSeq = await post(1500);
      (await worker({ store: first })).wake();
      await receiver.waitFor(() => receiver.on(path).length === 1);
      expect(receiver.on(path)[0]!.json.seq).toBe(postSeq);

      // A later start finds nothing left to seal.
      await new DoorbellStore(database, MASTER_KEY, entries.inSchema('rm'), legacy).init();
      expect((await first!.list(AGENT)).map((d) => d.url)).toEqual([url]);
    } finally {
      await stopWorkers();
      await sql`drop schema if exists ${sql.id(legacy)} cascade`.execute(database.db);
    }
  });

  it('keeps the body-only signature of a doorbell registered before timestamps until its owner registers it again', async () => {
    const legacy = 'vault_legacy_signing';
    // The schema as the release before timestamped signatures left it, with a doorbell and its secret in it.
    await migrate(database.db, legacy, doorbellMigrations.slice(0, 2));
    const path = '/legacy-signing';
    const url = receiver.url(path);
    const [oldSecret, newSecret] = ['old-short', 'a new secret of at least 16 bytes'];
    try {
      await sql`
        insert into ${sql.table(`${legacy}.doorbells`)} (id, agent_id, url, kinds, secret_sealed, after_seq, created_at, updated_at)
        values ('door_LEGACYSIGN', ${AGENT}, ${url}, 'post', ${seal(MASTER_KEY, Buffer.from(oldSecret), 'doorbell:door_LEGACYSIGN')}, ${rig.seq}, 0, 0)`.execute(database.db);
      const legacyStore = await new DoorbellStore(database, MASTER_KEY, entries.inSchema('rm'), legacy).init();
      (await worker({ store: legacyStore })).wake();

      const before = await post(1600);
      await announce();
      await receiver.waitFor(() => receiver.on(path).length === 1);
      const [old] = receiver.on(path);
      expect(old!.json.seq).toBe(before);
      expect(old!.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', oldSecret).update(old!.raw).digest('hex')}`);

      expect(await legacyStore.register({ agentId: AGENT, url, kinds: ['post'], secret: newSecret, ledgerHead: rig.seq, limit: 3 })).toMatchObject({ ok: true, created: false });
      const after = await post(1601);
      await announce();
      await receiver.waitFor(() => receiver.on(path).length === 2);
      const [, fresh] = receiver.on(path);
      expect(fresh!.json).toMatchObject({ seq: after, delivery_id: fresh!.headers['x-svc-delivery'] });
      expect(fresh!.headers['x-svc-signature']).toBe(timestampedSignature(fresh!, newSecret));
    } finally {
      await stopWorkers();
      await sql`drop schema if exists ${sql.id(legacy)} cascade`.execute(database.db);
    }
  });
});
