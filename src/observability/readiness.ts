// Readiness with dependencies: what `/api/v2/health` answers, on the edge (edge/health.ts) or, in a
// process without the edge (processor, integrations), on the metrics port (see roles/start.ts).
// The edge also answers whether it takes client writes (`intake`, at `/health/intake`): that needs
// Kafka alone, since its caches answer through a PostgreSQL outage and it goes on without Redis, so
// a load balancer's probe must not take it out of service for either.
//
// Readiness is checked in the background, every `intervalMs`, and a probe is answered from the
// latest result: at once, whatever the dependencies' latency, so a probe costs them nothing and
// can be pipelined behind other requests on one connection (uWS closes a connection when a
// request arrives while an earlier one is still awaiting its answer).

export interface HealthChecks {
  main_database: () => Promise<boolean>;
  cache_database: () => Promise<boolean>;
  /** Kafka answers: this process can write to it. */
  event_log: () => Promise<boolean>;
  /**
   * Every consumer of this process runs (none: true). The answer's `event_log` is false while one
   * does not (crashed, being restarted): such a process takes nothing from Kafka.
   */
  consuming?: () => boolean;
}

type Check = 'main_database' | 'cache_database' | 'event_log';

export interface ReadinessReply {
  status: number;
  body: { data: Record<Check, boolean> & { shutting_down?: true } };
}

export interface Readiness {
  /** The latest result (the first probes wait for the first one): 200 when every check passes. */
  current(): ReadinessReply | Promise<ReadinessReply>;
  /** The same body; 200 while Kafka answers, whatever PostgreSQL, Redis and the consumers do. */
  intake(): ReadinessReply | Promise<ReadinessReply>;
  /**
   * From now on both answer 503, with `shutting_down: true` in the body: the process is about to
   * stop, and a load balancer should send it nothing more.
   */
  drain(): void;
  stop(): void;
}

export interface ReadinessOptions {
  /** Pause between two rounds of checks. */
  intervalMs?: number;
  /** A check that has not answered by then counts as failed. */
  timeoutMs?: number;
}

interface Round {
  all: ReadinessReply;
  intake: ReadinessReply;
}

/** Runs every check in rounds: 200 when all pass, 503 otherwise, same body. */
export function watchReadiness(checks: HealthChecks, options: ReadinessOptions = {}): Readiness {
  const { intervalMs = 1_000, timeoutMs = 2_000 } = options;
  const check = async (): Promise<Round> => {
    const [main_database, cache_database, kafka] = await Promise.all([
      withTimeout(checks.main_database(), timeoutMs),
      withTimeout(checks.cache_database(), timeoutMs),
      withTimeout(checks.event_log(), timeoutMs),
    ]);
    const data = { main_database, cache_database, event_log: kafka && (checks.consuming?.() ?? true) };
    const all = Object.values(data).every(Boolean);
    return {
      all: { status: all ? 200 : 503, body: { data } },
      intake: { status: kafka ? 200 : 503, body: { data } },
    };
  };

  let latest: Round | undefined;
  let draining = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async (): Promise<Round> => {
    latest = await check();
    if (!stopped) timer = setTimeout(() => void round(), intervalMs).unref();
    return latest;
  };
  const first = round();
  const answer = (reply: ReadinessReply): ReadinessReply =>
    draining ? { status: 503, body: { data: { ...reply.body.data, shutting_down: true } } } : reply;
  return {
    current: () => (latest ? answer(latest.all) : first.then((r) => answer(r.all))),
    intake: () => (latest ? answer(latest.intake) : first.then((r) => answer(r.intake))),
    drain: () => {
      draining = true;
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

async function withTimeout(check: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check.catch(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
