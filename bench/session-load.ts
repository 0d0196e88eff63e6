// Visitors' sessions as load: what js-core and the surveys package send for a signed-in visitor who
// is shown the survey and answers it over two pages (widget-contract.md, "The calls"), one request
// after the other on the visitor's keep-alive connection, each using what the one before answered:
//
//   1. GET  /api/v1/client/{env}/environment       (js-core's setup)
//   2. POST /api/v2/client/{env}/user               (setUserId with attributes) → data.state.data.contactId
//   3. POST /api/v2/client/{env}/displays           {surveyId, contactId}       → data.id (displayId)
//   4. POST /api/v2/client/{env}/responses          the first page, finished: false → data.id
//   5. PUT  /api/v1/client/{env}/responses/{id}     the last page, finished: true
//
// The browser's CORS preflights are left out (a browser caches them, and the edge answers them
// alone). Visitors come back: session n is user n mod `users`, so a run of more sessions than users
// has new and returning visitors, and every identify carries a number attribute (`seats`).
//
// Closed loop: `connections` visitors at once, each starting its next session when the last ended;
// a session with an answer other than 2xx ends there and counts as failed. Run as a child process
// (`runSessionLoad`), like the paced generator, so that its CPU is its own to take off: it prints one
// JSON line with its figures and its own CPU time.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { TICKS_PER_SECOND } from './processes.ts';

export interface SessionLoadOptions {
  /** `http://host:port` of the server. */
  origin: string;
  environmentId: string;
  surveyId: string;
  connections: number;
  durationS: number;
  /** Distinct visitors: session n identifies user n mod `users`. */
  users: number;
}

export interface SessionLoadResult {
  sessionsPerSecond: number;
  /** Sessions whose five requests were all answered 2xx. */
  sessions: number;
  failedSessions: number;
  requests: number;
  non2xx: number;
  /** Connection errors and answers that could not be read. */
  errors: number;
  /** A whole session, from its first request to the answer of its last. */
  sessionP50Ms: number;
  sessionP99Ms: number;
  /** The first non-2xx answer, to say why sessions failed. */
  firstFailure?: string;
  startedAtMs: number;
  durationS: number;
  /** The generator's own CPU time (user + system), in clock ticks. */
  cpuTicks: number;
}

export const REQUESTS_PER_SESSION = 5;

export async function runSessionLoad(options: SessionLoadOptions): Promise<SessionLoadResult> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), JSON.stringify(options)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the session load generator exited with ${code}`);
  return JSON.parse(Buffer.concat(chunks).toString()) as SessionLoadResult;
}

interface Answer {
  status: number;
  body: string;
}

/** One keep-alive HTTP/1.1 connection, one request at a time; answers need a Content-Length. */
class Connection {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: ((answer: Answer) => void) | undefined;

  private constructor(
    private readonly socket: net.Socket,
    private readonly host: string,
  ) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => this.settle({ status: 0, body: '' }));
    socket.on('close', () => this.settle({ status: 0, body: '' }));
  }

  static async open(origin: URL): Promise<Connection> {
    const socket = net.connect(Number(origin.port), origin.hostname);
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Connection(socket, origin.host);
  }

  send(method: 'GET' | 'POST' | 'PUT', path: string, body?: string): Promise<Answer> {
    const head =
      `${method} ${path} HTTP/1.1\r\nHost: ${this.host}\r\nContent-Type: application/json\r\n` +
      (body === undefined ? '\r\n' : `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.socket.write(head);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.buffered.subarray(0, headEnd).toString('latin1');
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
    if (length === undefined) return this.settle({ status: 0, body: 'an answer without Content-Length' });
    const end = headEnd + 4 + Number(length);
    if (this.buffered.length < end) return;
    const body = this.buffered.subarray(headEnd + 4, end).toString('utf8');
    this.buffered = this.buffered.subarray(end);
    this.settle({ status: Number(head.slice(9, 12)), body });
  }

  private settle(answer: Answer): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(answer);
  }
}

class SessionFailed extends Error {}

async function generate(options: SessionLoadOptions): Promise<SessionLoadResult> {
  const origin = new URL(options.origin);
  const env = options.environmentId;
  const run = Date.now().toString(36);
  const latencies: number[] = [];
  let sessions = 0;
  let failedSessions = 0;
  let requests = 0;
  let non2xx = 0;
  let errors = 0;
  let firstFailure: string | undefined;
  let next = 0;
  const startedAtMs = Date.now();
  const start = performance.now();
  const end = start + options.durationS * 1000;

  const call = async (
    connection: Connection,
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
  ): Promise<Record<string, unknown>> => {
    requests++;
    const answer = await connection.send(method, path, body === undefined ? undefined : JSON.stringify(body));
    if (answer.status >= 200 && answer.status < 300)
      return answer.body === '' ? {} : (JSON.parse(answer.body) as Record<string, unknown>);
    if (answer.status === 0) errors++;
    else non2xx++;
    firstFailure ??= `${method} ${path}: ${answer.status} ${answer.body.slice(0, 300)}`;
    throw new SessionFailed();
  };

  /** A string at `path` in an answer, or the session fails (the server answered something else). */
  const field = (answer: Record<string, unknown>, ...path: string[]): string => {
    let value: unknown = answer;
    for (const key of path) value = (value as Record<string, unknown> | null)?.[key];
    if (typeof value === 'string') return value;
    errors++;
    firstFailure ??= `no ${path.join('.')} in ${JSON.stringify(answer).slice(0, 300)}`;
    throw new SessionFailed();
  };

  const session = async (connection: Connection, n: number): Promise<void> => {
    const user = n % options.users;
    await call(connection, 'GET', `/api/v1/client/${env}/environment`);
    const identified = await call(connection, 'POST', `/api/v2/client/${env}/user`, {
      userId: `visitor-${run}-${user}`,
      attributes: { email: `visitor-${user}@example.com`, plan: 'pro', seats: (user % 50) + 1 },
    });
    const contactId = field(identified, 'data', 'state', 'data', 'contactId');
    const display = await call(connection, 'POST', `/api/v2/client/${env}/displays`, {
      surveyId: options.surveyId,
      contactId,
    });
    const displayId = field(display, 'data', 'id');
    const created = await call(connection, 'POST', `/api/v2/client/${env}/responses`, {
      surveyId: options.surveyId,
      contactId,
      displayId,
      userId: null,
      singleUseId: null,
      pinAuthToken: null,
      finished: false,
      data: { q1: 'Great product' },
      ttc: { q1: 3.2 },
      variables: {},
      meta: { url: 'https://app.example.com/dashboard', source: 'app', action: 'New Session' },
    });
    const responseId = field(created, 'data', 'id');
    await call(connection, 'PUT', `/api/v1/client/${env}/responses/${responseId}`, {
      finished: true,
      data: { q2: 4 },
      ttc: { q2: 1.1 },
      variables: {},
      pinAuthToken: null,
    });
  };

  const visitor = async (): Promise<void> => {
    const connection = await Connection.open(origin);
    try {
      while (performance.now() < end) {
        const from = performance.now();
        try {
          await session(connection, next++);
          sessions++;
          latencies.push(performance.now() - from);
        } catch (error) {
          if (!(error instanceof SessionFailed)) throw error;
          failedSessions++;
          if (errors > 0) return;
        }
      }
    } finally {
      connection.close();
    }
  };
  await Promise.all(Array.from({ length: options.connections }, visitor));

  const durationS = (performance.now() - start) / 1000;
  // Since the process started: the machine's busy time is read from before it was spawned.
  const cpu = process.cpuUsage();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    sessionsPerSecond: sessions / durationS,
    sessions,
    failedSessions,
    requests,
    non2xx,
    errors,
    sessionP50Ms: at(0.5),
    sessionP99Ms: at(0.99),
    ...(firstFailure !== undefined && { firstFailure }),
    startedAtMs,
    durationS,
    cpuTicks: ((cpu.user + cpu.system) / 1e6) * TICKS_PER_SECOND,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await generate(JSON.parse(process.argv[2]!) as SessionLoadOptions);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
