// The design Chorus replaces, for a visitor's whole session (session-load.ts): a plain synchronous
// node:http server that answers each of the widget's calls once PostgreSQL has done it, one
// statement per request, in its own tables of the bench's database. It does what the widget needs
// of each call (widget-contract.md) and what the issue asks of the stored session, and no more:
// - the environment state: the environment's surveys read from the database;
// - identify: the contact upserted, its attributes merged (`||`), and in the same statement the
//   history the widget's user state lists (the surveys the contact was shown, with when, and those
//   it answered: the widget filters its surveys by them), read through the `contact_id` indexes;
// - a display: one INSERT, the new id returned;
// - a response: one INSERT that snapshots the contact's attributes as they are at that moment
//   (Formbricks' `contactAttributes`), the new id returned;
// - the response's last page: one UPDATE merging its data and marking it finished.
// It checks nothing but the JSON (no schemas, rate limits or caches) and knows no segments (the
// bench's environment has none): the least such a server does.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { newId } from '../src/ids.ts';

export interface BaselineSessionServer {
  port: number;
  /** Responses finished: one per complete session. */
  countFinished(): Promise<number>;
  close(): Promise<void>;
}

const SCHEMA = [
  `create table if not exists bench_session_surveys (id text primary key, environment_id text not null, body jsonb not null)`,
  `create index if not exists bench_session_surveys_environment on bench_session_surveys (environment_id)`,
  `create table if not exists bench_session_contacts (id text primary key, environment_id text not null,
     user_id text not null, attributes jsonb not null, unique (environment_id, user_id))`,
  `create table if not exists bench_session_displays (id text primary key, survey_id text not null,
     contact_id text, created_at timestamptz not null default now())`,
  `create index if not exists bench_session_displays_contact on bench_session_displays (contact_id)`,
  `create table if not exists bench_session_responses (id text primary key, survey_id text not null,
     contact_id text, display_id text, finished boolean not null, data jsonb not null, meta jsonb,
     contact_attributes jsonb, created_at timestamptz not null default now(),
     updated_at timestamptz not null default now())`,
  `create index if not exists bench_session_responses_contact on bench_session_responses (contact_id)`,
];

/** Identify: the contact upserted, and the history of the user state read beside it. */
const IDENTIFY = `
  with contact as (
    insert into bench_session_contacts (id, environment_id, user_id, attributes) values ($1, $2, $3, $4)
    on conflict (environment_id, user_id)
    do update set attributes = bench_session_contacts.attributes || excluded.attributes returning id)
  select contact.id,
    (select coalesce(json_agg(json_build_object('surveyId', d.survey_id, 'createdAt', d.created_at)), '[]')
       from bench_session_displays d where d.contact_id = contact.id) as displays,
    (select coalesce(json_agg(distinct r.survey_id), '[]')
       from bench_session_responses r where r.contact_id = contact.id) as responses
  from contact`;

const CLIENT_PATH = /^\/api\/v[12]\/client\/([^/]+)\/(environment|user|displays|responses)(?:\/([^/]+))?$/;

export async function startBaselineSessionServer(
  databaseUrl: string,
  environmentId: string,
  survey: { id: string; body: unknown },
): Promise<BaselineSessionServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', () => undefined);
  for (const statement of SCHEMA) await pool.query(statement);
  await pool.query(
    'insert into bench_session_surveys (id, environment_id, body) values ($1, $2, $3) on conflict do nothing',
    [survey.id, environmentId, survey.body],
  );

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res
      .writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
      .end(text);
  };

  const handle = async (method: string, url: string, body: Record<string, unknown>) => {
    const [, env, resource, id] = CLIENT_PATH.exec(url) ?? [];
    if (method === 'GET' && resource === 'environment') {
      const { rows } = await pool.query('select body from bench_session_surveys where environment_id = $1', [
        env,
      ]);
      return {
        data: {
          data: { surveys: rows.map((r: { body: unknown }) => r.body), actionClasses: [] },
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        },
      };
    }
    if (method === 'POST' && resource === 'user' && !id) {
      const { rows } = await pool.query(IDENTIFY, [newId('ctc'), env, body.userId, body.attributes ?? {}]);
      const {
        id: contactId,
        displays,
        responses,
      } = rows[0] as {
        id: string;
        displays: { surveyId: string; createdAt: string }[];
        responses: string[];
      };
      const data = {
        userId: body.userId,
        contactId,
        segments: [],
        displays,
        responses,
        lastDisplayAt: displays.reduce<string | null>(
          (last, d) => (last === null || d.createdAt > last ? d.createdAt : last),
          null,
        ),
      };
      return { data: { state: { data, expiresAt: new Date(Date.now() + 1_800_000).toISOString() } } };
    }
    if (method === 'POST' && resource === 'displays' && !id) {
      const displayId = newId('dsp');
      await pool.query('insert into bench_session_displays (id, survey_id, contact_id) values ($1, $2, $3)', [
        displayId,
        body.surveyId,
        body.contactId ?? null,
      ]);
      return { data: { id: displayId } };
    }
    if (method === 'POST' && resource === 'responses' && !id) {
      const responseId = newId('rsp');
      await pool.query(
        `insert into bench_session_responses
           (id, survey_id, contact_id, display_id, finished, data, meta, contact_attributes)
         values ($1, $2, $3, $4, $5, $6, $7, (select attributes from bench_session_contacts where id = $3))`,
        [
          responseId,
          body.surveyId,
          body.contactId ?? null,
          body.displayId ?? null,
          body.finished === true,
          body.data,
          body.meta,
        ],
      );
      return { data: { id: responseId, quotaFull: false } };
    }
    if (method === 'PUT' && resource === 'responses' && id) {
      const { rowCount } = await pool.query(
        `update bench_session_responses set data = data || $2, finished = $3, updated_at = now() where id = $1`,
        [id, body.data ?? {}, body.finished === true],
      );
      return rowCount === 0 ? undefined : { data: { quotaFull: false } };
    }
    return undefined;
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        if (chunks.length > 0)
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return answer(res, 400, { code: 'bad_request' });
      }
      handle(req.method ?? '', req.url ?? '', body).then(
        (result) => (result ? answer(res, 200, result) : answer(res, 404, { code: 'not_found' })),
        () => answer(res, 503, { code: 'service_unavailable' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    countFinished: async () => {
      const { rows } = await pool.query('select count(*) as n from bench_session_responses where finished');
      return Number((rows[0] as { n: string }).n);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}
