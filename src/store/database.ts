// Creates the configured database when it does not exist yet (the server itself must answer).
import pg from 'pg';

/** True when a PostgreSQL server answers at the URL's host (any database). */
export async function serverAnswers(databaseUrl: string): Promise<boolean> {
  return (await serverProblem(databaseUrl)) === undefined;
}

/** Why no PostgreSQL server takes a connection at the URL (refused, bad password, …), or undefined. */
export async function serverProblem(databaseUrl: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: adminUrl(databaseUrl), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return withTlsHint((error as Error).message || String((error as { code?: unknown }).code ?? error));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A refused connection's message, with what to put in DATABASE_URL when TLS is the cause: pg reads
 * libpq's `sslmode`, `sslrootcert`, `sslcert` and `sslkey` from the URL.
 */
function withTlsHint(message: string): string {
  if (/pg_hba\.conf.*no encryption/.test(message))
    return `${message}: the server takes TLS only; add sslmode=verify-full&sslrootcert=<the CA file> to DATABASE_URL`;
  if (/self[- ]signed certificate|unable to verify|unable to get local issuer/i.test(message))
    return `${message}: the server's certificate is not trusted; add sslrootcert=<the CA file that signed it> to DATABASE_URL`;
  if (/does not support SSL/i.test(message))
    return `${message}: the server takes no TLS; remove sslmode from DATABASE_URL or turn TLS on in the server`;
  return message;
}

export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const name = databaseName(databaseUrl);
  const client = new pg.Client({ connectionString: adminUrl(databaseUrl), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database ${quoteIdent(name)}`).catch((error: unknown) => {
        // Another process created it between our check and our create: that is fine.
        if ((error as { code?: string }).code !== '42P04') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = databaseName(databaseUrl);
  if (!name.includes('test'))
    throw new Error(`refusing to drop database "${name}": its name does not say test`);
  const client = new pg.Client({ connectionString: adminUrl(databaseUrl) });
  await client.connect();
  try {
    await client.query(`drop database if exists ${quoteIdent(name)} with (force)`);
  } finally {
    await client.end();
  }
}

export function databaseName(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'postgres';
}

export function withDatabase(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}

function adminUrl(databaseUrl: string): string {
  return withDatabase(databaseUrl, 'postgres');
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
