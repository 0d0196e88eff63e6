// The design Chorus replaces, as a baseline: a plain synchronous server (node:http) that parses the
// body and INSERTs it into PostgreSQL, one statement per request, and answers once it is stored. It
// writes to its own table in the bench's database, on the same server Chorus uses.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { newId } from '../src/ids.ts';

export interface BaselineServer {
  port: number;
  close(): Promise<void>;
}

export async function startBaselineServer(databaseUrl: string): Promise<BaselineServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // An idle connection ended by the server (the round's database dropped) is not the measurement's
  // failure, and without a listener it would end the bench (pg emits it on the pool).
  pool.on('error', () => undefined);
  await pool.query(
    'create table if not exists bench_baseline (id text primary key, body jsonb not null, created_at timestamptz not null default now())',
  );
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"code":"bad_request"}');
        return;
      }
      const id = newId('rsp');
      pool.query('insert into bench_baseline (id, body) values ($1, $2)', [id, body]).then(
        () =>
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ data: { id } })),
        () =>
          res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"code":"service_unavailable"}'),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}
