// A steady client load for fault tests, and the ledger that proves what survived.
//
// Each logical response is a chain, as the widget sends it: a create (not finished), an update that
// adds an answer, and an update that finishes it; each step starts once the previous one was
// acknowledged. Both updates set `step`, so a finish applied before the update it followed shows. A step answered 503 (or not answered at all) is retried after a second with the
// same body, and a create with the same `Idempotency-Key`, as a well-behaved client does. Displays
// and identifies run beside them from several environments: a display once, a user identified
// twice (the second identify changes the attribute the first set).
//
// With several `baseUrls` (edges behind one address) each request goes to the next edge, so a
// response's create, update and finish usually reach different edges.
//
// The ledger records every request (when sent, when answered, the status, what it wrote). What was
// acknowledged is then compared with what PostgreSQL holds: every acknowledged command must be
// reflected in its row (lost otherwise; a finish applied before the update it followed leaves the
// update's `step`, so order per response is checked too), and no logical response may have two
// rows (duplicated). Windows of a fault (the broker, PostgreSQL stopped) single out the requests
// sent meanwhile.
//
// Each request opens a connection of its own. Kept alive, a connection uWS had closed after 10 s
// idle could still be taken for the next request: undici counts its keep-alive timeout in ticks of
// its own timer, which a stalled client loop stretches past uWS' idle timeout, and the request then
// fails on a connection the edge closed before it was sent (a browser retries that case by itself;
// undici's fetch does not).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { Agent, fetch } from 'undici';

export interface Tenant {
  environmentId: string;
  surveyId: string;
}

type Kind = 'create' | 'update' | 'finish' | 'display' | 'identify';
type Outcome = number | 'network' | 'timeout';

export interface Sent {
  kind: Kind;
  sentAt: number;
  answeredAt: number;
  outcome: Outcome;
  /** The request, for the report of a surprising answer. */
  what: string;
  /** Why a request got no answer (the client's error). */
  error?: string;
  /**
   * What it wrote, as the ledger names it (see StoredCheck.lostRefs): a logical response's marker,
   * a display's id (once answered), an identified user's `environmentId/userId`.
   */
  ref?: string;
  /**
   * A finish sent again after a lost answer and refused as already finished: it confirms the
   * earlier attempt, which was applied (see chain()).
   */
  confirmsEarlier?: boolean;
}

interface LogicalResponse {
  marker: string;
  tenant: Tenant;
  score: number;
  id?: string;
  updateAcked: boolean;
  finishAcked: boolean;
}

export interface LoadOptions {
  baseUrl: string;
  /** Edges behind one address: requests go to each in turn (default: `baseUrl` alone). */
  baseUrls?: string[];
  tenants: Tenant[];
  /** Tells the logical responses of one scenario from another's. */
  label: string;
  /** Response writes (creates, updates, finishes together) per second. */
  responseWritesPerSecond?: number;
  displaysPerSecond?: number;
  identifiesPerSecond?: number;
}

const REQUEST_TIMEOUT_MS = 5_000;
/** A hold-up of the client's event loop longer than this is its own stall (see longestWithout2xx). */
const STALL_MS = 200;
const RETRY_DELAY_MS = 1_000;
/** After stop(), chains still waiting for an acknowledgement give up after this long. */
const DRAIN_MS = 8_000;
const MAX_CHAINS_IN_FLIGHT = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection per request (see the top of this file). */
const dispatcher = new Agent({ pipelining: 0 });

export class FaultLoad {
  readonly requests: Sent[] = [];
  readonly responses: LogicalResponse[] = [];
  readonly displays: { id: string; tenant: Tenant }[] = [];
  readonly identifies: { tenant: Tenant; userId: string; plan: string }[] = [];
  /** Finishes sent again after a lost answer and refused as already finished (see chain()). */
  finishesConfirmedByRefusal = 0;
  private readonly brokerDown: { from: number; to?: number }[] = [];
  private readonly storeDown: { from: number; to?: number }[] = [];
  private stopping = false;
  private drainUntil = Infinity;
  private readonly running = new Set<Promise<void>>();
  private ticker: NodeJS.Timeout | undefined;
  /** The client's own event loop, whose stalls a report shows beside unanswered requests. */
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 20 });
  /** When the client's own event loop was held up for over STALL_MS (it read no answer then). */
  private readonly stalls: { from: number; to: number }[] = [];
  private stallWatch: NodeJS.Timeout | undefined;

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.loopDelay.enable();
    let tick = Date.now();
    this.stallWatch = setInterval(() => {
      const now = Date.now();
      if (now - tick > STALL_MS) this.stalls.push({ from: tick, to: now });
      tick = now;
    }, 20);
    const began = Date.now();
    const chainsPerSecond = (this.options.responseWritesPerSecond ?? 100) / 3;
    const due = { chain: 0, display: 0, identify: 0 };
    let chainsInFlight = 0;
    this.ticker = setInterval(() => {
      const elapsed = (Date.now() - began) / 1000;
      while (due.chain < Math.floor(elapsed * chainsPerSecond) && chainsInFlight < MAX_CHAINS_IN_FLIGHT) {
        chainsInFlight++;
        this.track(this.chain(due.chain++).finally(() => chainsInFlight--));
      }
      while (due.display < Math.floor(elapsed * (this.options.displaysPerSecond ?? 5))) {
        this.track(this.display(due.display++));
      }
      while (due.identify < Math.floor(elapsed * (this.options.identifiesPerSecond ?? 5))) {
        this.track(this.identify(due.identify++));
      }
    }, 20);
  }

  /** Stops starting new work and waits for what is in flight (retries end after DRAIN_MS). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.drainUntil = Date.now() + DRAIN_MS;
    clearInterval(this.ticker);
    clearInterval(this.stallWatch);
    while (this.running.size > 0) await Promise.all([...this.running]);
    this.loopDelay.disable();
  }

  /**
   * The longest the client's own event loop was held up, in ms: tells a client that could not keep
   * up from an edge that did not answer.
   */
  clientStallMs(): number {
    return Math.round(this.loopDelay.max / 1e6);
  }

  markBrokerDown(): void {
    this.brokerDown.push({ from: Date.now() });
  }

  markBrokerUp(): void {
    const last = this.brokerDown.at(-1);
    if (last && last.to === undefined) last.to = Date.now();
  }

  markStoreDown(): void {
    this.storeDown.push({ from: Date.now() });
  }

  markStoreUp(): void {
    const last = this.storeDown.at(-1);
    if (last && last.to === undefined) last.to = Date.now();
  }

  /** The window PostgreSQL was stopped in, when the scenario marked one. */
  storeOutage(): { durationMs: number } | undefined {
    const window = this.storeDown.at(-1);
    return window && { durationMs: (window.to ?? Date.now()) - window.from };
  }

  /** Requests sent while PostgreSQL was stopped (between markStoreDown and markStoreUp). */
  sentWhileStoreDown(): Sent[] {
    return this.requests.filter((r) =>
      this.storeDown.some((w) => r.sentAt >= w.from && r.sentAt < (w.to ?? Infinity)),
    );
  }

  /** Requests sent after the broker was down and answered 2xx before it was started again. */
  acknowledgedWhileBrokerDown(): Sent[] {
    return this.requests.filter(
      (r) =>
        typeof r.outcome === 'number' &&
        r.outcome < 300 &&
        this.brokerDown.some((w) => r.sentAt >= w.from && r.answeredAt <= (w.to ?? Infinity)),
    );
  }

  private sentCount = 0;
  private nextBaseUrl(): string {
    const urls = this.options.baseUrls ?? [this.options.baseUrl];
    return urls[this.sentCount++ % urls.length]!;
  }

  private track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  private async send(kind: Kind, method: string, path: string, body: unknown, headers = {}, ref?: string) {
    const sentAt = Date.now();
    const baseUrl = this.nextBaseUrl();
    let outcome: Outcome;
    let answer: unknown;
    let failure: string | undefined;
    try {
      const reply = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        dispatcher,
      });
      outcome = reply.status;
      answer = await reply.json().catch(() => undefined);
    } catch (error) {
      outcome = error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'network';
      const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined;
      failure = cause?.code ?? (error instanceof Error ? error.message : String(error));
    }
    const sent: Sent = {
      kind,
      sentAt,
      answeredAt: Date.now(),
      outcome,
      what: `${method} ${baseUrl}${path}`,
      error: failure,
      ref,
    };
    this.requests.push(sent);
    return {
      outcome,
      answer: answer as { details?: { code?: string }; data?: { id?: string } } | undefined,
      sent,
    };
  }

  /**
   * Sends until answered for good; retries a 503, a timeout or a broken connection, and for a
   * create (which carries an `Idempotency-Key`) a 409, which says that an earlier attempt with the
   * key still holds it: the edge handling it may have died mid-request and its lease runs out.
   * `retried` says whether an earlier attempt may have been applied.
   */
  private async untilAnswered(
    kind: Kind,
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    ref: string,
  ) {
    for (let attempt = 0; ; attempt++) {
      const reply = await this.send(kind, method, path, body, headers, ref);
      const retry =
        reply.outcome === 503 ||
        reply.outcome === 'network' ||
        reply.outcome === 'timeout' ||
        (kind === 'create' && reply.outcome === 409);
      if (!retry || Date.now() > this.drainUntil) return { ...reply, retried: attempt > 0 };
      await sleep(RETRY_DELAY_MS);
    }
  }

  private tenant(n: number): Tenant {
    return this.options.tenants[n % this.options.tenants.length]!;
  }

  private async chain(n: number): Promise<void> {
    const tenant = this.tenant(n);
    const logical: LogicalResponse = {
      marker: `${this.options.label}-${n}`,
      tenant,
      score: 1 + (n % 5),
      updateAcked: false,
      finishAcked: false,
    };
    this.responses.push(logical);
    const base = `/api/v1/client/${tenant.environmentId}/responses`;
    const created = await this.untilAnswered(
      'create',
      'POST',
      base,
      { surveyId: tenant.surveyId, finished: false, data: { feedback: logical.marker } },
      { 'idempotency-key': logical.marker },
      logical.marker,
    );
    if (created.outcome !== 200 || !created.answer?.data?.id) return;
    logical.id = created.answer.data.id;
    const path = `${base}/${logical.id}`;
    const updated = await this.untilAnswered(
      'update',
      'PUT',
      path,
      { data: { score: logical.score, step: 'answered' } },
      {},
      logical.marker,
    );
    if (updated.outcome !== 200) return;
    logical.updateAcked = true;
    const finished = await this.untilAnswered(
      'finish',
      'PUT',
      path,
      { finished: true, data: { plan: 'pro', step: 'finished' } },
      {},
      logical.marker,
    );
    // A finish whose answer was lost (and which was applied) is refused when sent again: the
    // response is finished already. The edge says so, so the store must hold it finished too.
    const finishedBefore =
      finished.retried &&
      finished.outcome === 400 &&
      finished.answer?.details?.code === 'response_already_finished';
    if (finishedBefore) {
      this.finishesConfirmedByRefusal++;
      finished.sent.confirmsEarlier = true;
    }
    logical.finishAcked = finished.outcome === 200 || finishedBefore;
  }

  private async display(n: number): Promise<void> {
    const tenant = this.tenant(n);
    const reply = await this.send('display', 'POST', `/api/v1/client/${tenant.environmentId}/displays`, {
      surveyId: tenant.surveyId,
    });
    if (reply.outcome === 200 && reply.answer?.data?.id) {
      reply.sent.ref = reply.answer.data.id;
      this.displays.push({ id: reply.answer.data.id, tenant });
    }
  }

  private async identify(n: number): Promise<void> {
    const tenant = this.tenant(n);
    const userId = `${this.options.label}-user-${n}`;
    const plan = `plan-${n}`;
    const path = `/api/v1/client/${tenant.environmentId}/user`;
    const ref = `${tenant.environmentId}/${userId}`;
    const first = await this.send(
      'identify',
      'POST',
      path,
      { userId, attributes: { plan: 'trial' } },
      {},
      ref,
    );
    if (first.outcome !== 200) return;
    const reply = await this.send('identify', 'POST', path, { userId, attributes: { plan } }, {}, ref);
    if (reply.outcome === 200) this.identifies.push({ tenant, userId, plan });
  }

  /**
   * The longest time between two 2xx answers (ms) from `from` to `to` (the fault's window; by
   * default the whole run), less the time the client's own event loop was held up meanwhile (it
   * read no answer then, whatever the service did): how long the service, to its clients, stopped
   * taking writes, and when that ended.
   */
  longestWithout2xx(from = 0, to = Infinity): { longest: number; endedAt: number } {
    const answered = [
      from,
      ...this.requests
        .filter((r) => typeof r.outcome === 'number' && r.outcome < 300)
        .map((r) => r.answeredAt)
        .filter((at) => at > from && at < to),
      ...(to === Infinity ? [] : [to]),
    ].sort((a, b) => a - b);
    if (from === 0) answered.shift();
    const stalled = (a: number, b: number) =>
      this.stalls.reduce((sum, s) => sum + Math.max(0, Math.min(b, s.to) - Math.max(a, s.from)), 0);
    let longest = 0;
    let endedAt = 0;
    for (let i = 1; i < answered.length; i++) {
      const gap = answered[i]! - answered[i - 1]! - stalled(answered[i - 1]!, answered[i]!);
      if (gap <= longest) continue;
      longest = gap;
      endedAt = answered[i]!;
    }
    return { longest, endedAt };
  }

  /** Why requests got no answer: `{"ECONNREFUSED": n, …}`. */
  failures(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const r of this.requests) if (r.error) counts[r.error] = (counts[r.error] ?? 0) + 1;
    return counts;
  }

  /** Requests by outcome: `{"200": n, "503": n, "network": n, …}`. */
  outcomes(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const r of this.requests) counts[String(r.outcome)] = (counts[String(r.outcome)] ?? 0) + 1;
    return counts;
  }
}

export interface StoredCheck {
  /** Rows of responses in the scenario's environments. */
  stored: number;
  /** Acknowledged logical responses whose row is missing or differs from what was acknowledged. */
  lost: string[];
  /** Logical responses with more than one row (one entry per extra row). */
  duplicated: string[];
  displaysLost: string[];
  /** Displays stored that no request was answered 2xx for: written though answered 503 or not at all. */
  displaysUnacknowledged: number;
  identifiesLost: string[];
  /**
   * Everything lost or doubled, by the `ref` of the requests that wrote it: the markers of lost and
   * duplicated responses, the ids of lost displays, the keys of lost identifies.
   */
  lostRefs: Set<string>;
}

/** Compares what the load had acknowledged with what the database holds now. */
export async function checkStored(databaseUrl: string, load: FaultLoad): Promise<StoredCheck> {
  const environments = [...new Set(load.responses.map((r) => r.tenant.environmentId))];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const rows = await client.query<{ id: string; finished: boolean; data: Record<string, unknown> }>(
      'select id, finished, data from responses where environment_id = any($1)',
      [environments],
    );
    const byId = new Map(rows.rows.map((row) => [row.id, row]));
    const perMarker = new Map<string, number>();
    for (const row of rows.rows) {
      const marker = String(row.data.feedback);
      perMarker.set(marker, (perMarker.get(marker) ?? 0) + 1);
    }
    const lost: string[] = [];
    const lostMarkers: string[] = [];
    for (const r of load.responses) {
      if (!r.id) continue;
      const row = byId.get(r.id);
      const problem = !row
        ? 'missing'
        : row.data.feedback !== r.marker
          ? `feedback ${String(row.data.feedback)}`
          : r.updateAcked && row.data.score !== r.score
            ? `score ${String(row.data.score)} instead of ${r.score}`
            : r.finishAcked && (!row.finished || row.data.plan !== 'pro' || row.data.step !== 'finished')
              ? `finished=${row.finished} plan=${String(row.data.plan)} step=${String(row.data.step)}`
              : undefined;
      if (problem) {
        lost.push(`${r.id} (${r.marker}): ${problem}`);
        lostMarkers.push(r.marker);
      }
    }
    const duplicated = [...perMarker].flatMap(([marker, count]) =>
      Array.from({ length: count - 1 }, () => marker),
    );

    const displayIds = load.displays.map((d) => d.id);
    const displays = await client.query<{ id: string }>('select id from displays where id = any($1)', [
      displayIds,
    ]);
    const foundDisplays = new Set(displays.rows.map((d) => d.id));
    const unacknowledged = await client.query<{ count: string }>(
      'select count(*) from displays where environment_id = any($1) and id <> all($2)',
      [environments, displayIds],
    );
    const contacts = await client.query<{
      environment_id: string;
      user_id: string;
      attributes: Record<string, string>;
    }>('select environment_id, user_id, attributes from contacts where environment_id = any($1)', [
      environments,
    ]);
    const contactOf = new Map(contacts.rows.map((c) => [`${c.environment_id}/${c.user_id}`, c.attributes]));
    const displaysLost = displayIds.filter((id) => !foundDisplays.has(id));
    const identifiesLost = load.identifies
      .filter((i) => contactOf.get(`${i.tenant.environmentId}/${i.userId}`)?.plan !== i.plan)
      .map((i) => `${i.tenant.environmentId}/${i.userId}`);
    return {
      stored: rows.rows.length,
      lost,
      duplicated,
      displaysLost,
      displaysUnacknowledged: Number(unacknowledged.rows[0]!.count),
      identifiesLost,
      lostRefs: new Set([...lostMarkers, ...duplicated, ...displaysLost, ...identifiesLost]),
    };
  } finally {
    await client.end();
  }
}
