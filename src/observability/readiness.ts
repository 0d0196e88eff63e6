// Readiness with dependencies: what `/api/v2/health` answers, on the edge (edge/health.ts) or, in a
// process without the edge (processor, integrations), on the metrics port (see roles/start.ts).
//
// Readiness is checked in the background, every `intervalMs`, and a probe is answered from the
// latest result: at once, whatever the dependencies' latency, so a probe costs them nothing and
// can be pipelined behind other requests on one connection (uWS closes a connection when a
// request arrives while an earlier one is still awaiting its answer).

/**
 * `event_log` is false while Kafka does not answer, and also while a consumer of this process is
 * not running (crashed, being restarted): such a process takes nothing from Kafka.
 */
export type HealthChecks = Record<'main_database' | 'cache_database' | 'event_log', () => Promise<boolean>>;

export interface ReadinessReply {
  status: number;
  body: { data: Record<keyof HealthChecks, boolean> };
}

export interface Readiness {
  /** The latest result (the first probes wait for the first one). */
  current(): ReadinessReply | Promise<ReadinessReply>;
  stop(): void;
}

export interface ReadinessOptions {
  /** Pause between two rounds of checks. */
  intervalMs?: number;
  /** A check that has not answered by then counts as failed. */
  timeoutMs?: number;
}

/** Runs every check in rounds: 200 when all pass, 503 otherwise, same body. */
export function watchReadiness(checks: HealthChecks, options: ReadinessOptions = {}): Readiness {
  const { intervalMs = 1_000, timeoutMs = 2_000 } = options;
  const names = Object.keys(checks) as (keyof HealthChecks)[];
  const check = async (): Promise<ReadinessReply> => {
    const results = await Promise.all(names.map((name) => withTimeout(checks[name](), timeoutMs)));
    const data = Object.fromEntries(
      names.map((name, i) => [name, results[i]]),
    ) as ReadinessReply['body']['data'];
    return { status: results.every(Boolean) ? 200 : 503, body: { data } };
  };

  let latest: ReadinessReply | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async (): Promise<ReadinessReply> => {
    latest = await check();
    if (!stopped) timer = setTimeout(() => void round(), intervalMs).unref();
    return latest;
  };
  const first = round();
  return {
    current: () => latest ?? first,
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
