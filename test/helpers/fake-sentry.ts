// A local stand-in for a Sentry ingest endpoint (`POST /api/{project}/envelope/`), for tests that
// drive the real Sentry SDK at it with a DSN of `http://{key}@127.0.0.1:PORT/{project}`. Like
// Sentry, it answers 401 to an unknown public key and 400 to a body that is not an envelope;
// received events are kept in `events`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, send, startFakeServer } from './fake-provider.ts';

export interface FakeSentryEvent {
  environment?: string;
  release?: string;
  tags?: Record<string, string>;
  extra?: Record<string, unknown>;
  exception?: { values?: { type?: string; value?: string; stacktrace?: { frames?: unknown[] } }[] };
  /** The whole event as received, to check what was NOT sent. */
  raw: string;
}

export interface FakeSentry {
  readonly dsn: string;
  readonly events: FakeSentryEvent[];
  close(): Promise<void>;
}

export async function startFakeSentry(publicKey = 'choruspublickey', project = '42'): Promise<FakeSentry> {
  const events: FakeSentryEvent[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method !== 'POST' || url.pathname !== `/api/${project}/envelope/`) {
      send(res, 404, { detail: 'not found' });
      return;
    }
    const key =
      url.searchParams.get('sentry_key') ??
      /sentry_key=([^,\s]+)/.exec(String(req.headers['x-sentry-auth'] ?? ''))?.[1];
    if (key !== publicKey) {
      send(res, 401, { detail: 'invalid api key' });
      return;
    }
    // An envelope: a header line, then (item header line, payload line) pairs.
    const lines = (await readBody(req)).split('\n').filter((l) => l.length > 0);
    try {
      JSON.parse(lines[0]!);
      for (let i = 1; i + 1 < lines.length; i += 2) {
        const item = JSON.parse(lines[i]!) as { type?: string };
        if (item.type === 'event')
          events.push({ ...(JSON.parse(lines[i + 1]!) as object), raw: lines[i + 1]! });
      }
    } catch {
      send(res, 400, { detail: 'invalid envelope' });
      return;
    }
    send(res, 200, {});
  };
  const server = await startFakeServer(handle, (res, error) => send(res, 500, { detail: String(error) }));
  const { host } = new URL(server.base);
  return { dsn: `http://${publicKey}@${host}/${project}`, events, close: () => server.close() };
}
