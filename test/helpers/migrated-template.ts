// A test world's database as a copy of one with every migration applied (CREATE DATABASE …
// TEMPLATE): about 30 ms and next to no CPU, where migrating a new database took 0.6 s and as many
// CPU-seconds, for each of the hundred-odd worlds of a run. The template is made once per server
// and set of migrations, named by a digest of the migrations' sources, so a changed migration makes
// a new one (and the templates of older sets are dropped); every checkout on the machine shares it.
// A copy records its own database as the store's (store/incarnation.ts), as migrating it would
// have: with the template's, Chorus would take it for a database restored from a backup.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { databaseName, withDatabase } from '../../src/store/database.ts';
import { root } from '../test-files.ts';

const TEMPLATE_PREFIX = 'chorus_test_template_';
const TEMPLATE_LOCK = 74_201_123; // one process makes the template, the others wait for it

/** Memo per server: a process's worlds share the template's making. */
const templates = new Map<string, Promise<string>>();

/**
 * Creates the database of `databaseUrl` as a copy of the migrated template; false when it could not
 * (it then does not exist, and the caller creates it empty, for Chorus to migrate as it starts).
 */
export async function copyOfMigratedTemplate(databaseUrl: string): Promise<boolean> {
  const server = withDatabase(databaseUrl, 'postgres');
  let template = templates.get(server);
  if (!template) {
    template = migratedTemplate(server);
    templates.set(server, template);
  }
  const admin = new pg.Client({ connectionString: server });
  const copy = new pg.Client({ connectionString: databaseUrl });
  try {
    const name = await template;
    await admin.connect();
    await admin.query(`create database ${quoted(databaseName(databaseUrl))} template ${quoted(name)}`);
    await copy.connect();
    await copy.query(
      `update store_incarnation set database_oid = live.oid
       from (select oid from pg_database where datname = current_database()) live`,
    );
    return true;
  } catch {
    // A copy made halfway is dropped (with the connection to it).
    await admin
      .query(`drop database if exists ${quoted(databaseName(databaseUrl))} with (force)`)
      .catch(() => undefined);
    return false;
  } finally {
    await copy.end().catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

/** The template's name, once it exists on the server. */
async function migratedTemplate(server: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${migrationsDigest()}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    if (await exists(admin, name)) return name;
    await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    if (await exists(admin, name)) return name;
    // Made aside and renamed once whole: a process cut off halfway leaves only the partial copy.
    const partial = `${name}_partial`;
    await admin.query(`drop database if exists ${quoted(partial)} with (force)`);
    await admin.query(`create database ${quoted(partial)}`);
    // Imported here: a test that loads MikroORM itself first (transient-contexts) must be the first.
    const { migrate, openMigrationStore } = await import('../../src/store/orm.ts');
    const orm = await openMigrationStore(withDatabase(server, partial));
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
    // The migrator's connections may take a moment to end; a database is renamed only without any.
    await admin.query(`alter database ${quoted(partial)} rename to ${quoted(name)}`).catch(async () => {
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [
        partial,
      ]);
      await admin.query(`alter database ${quoted(partial)} rename to ${quoted(name)}`);
    });
    const older = await admin.query<{ datname: string }>(
      `select datname from pg_database where starts_with(datname, $1) and datname <> $2`,
      [TEMPLATE_PREFIX, name],
    );
    for (const { datname } of older.rows)
      await admin.query(`drop database if exists ${quoted(datname)}`).catch(() => undefined);
    return name;
  } finally {
    await admin.end(); // and with the session, the lock
  }
}

async function exists(admin: pg.Client, name: string): Promise<boolean> {
  return (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
}

/** Ten hex digits of the migrations' sources, in name order. */
function migrationsDigest(): string {
  const folder = path.join(root, 'src/store/migrations');
  const hash = createHash('sha256');
  for (const file of readdirSync(folder).sort())
    hash.update(file).update(readFileSync(path.join(folder, file)));
  return hash.digest('hex').slice(0, 10);
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
