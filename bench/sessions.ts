// The visitor-session comparison: a signed-in visitor's whole session (session-load.ts) against the
// synchronous baseline doing the same session (baseline-session-server.ts) and against Chorus as
// `npm start` runs it, in rounds, each on a fresh database, every other round in the reverse order.
// Sessions per second are the generator's (sessions whose five answers were 2xx); the CPU per
// session is the machine's busy time minus the generator's, from the start of the load until every
// finished response is stored, divided by the finished responses stored (cost.ts).
import { freePort } from '../test/helpers/local-kafka.ts';
import { measureCost, waitForRows, type CostLoad, type CostResult } from './cost.ts';
import { rolesOf, startChorusProcess } from './processes.ts';
import { startBaselineSessionServer } from './baseline-session-server.ts';
import { startSessionFloor } from './session-floor.ts';
import { runSessionLoad, type SessionLoadOptions, type SessionLoadResult } from './session-load.ts';
import type { Logger } from '../src/logger.ts';
import type { ResponseBenchWorld } from './world.ts';

export interface SessionSettings {
  rounds: number;
  connections: number;
  durationS: number;
  users: number;
  warmUpS: number;
  readyTimeoutMs: number;
}

export interface SessionRound {
  baseline: CostResult<SessionLoadResult>;
  chorus: CostResult<SessionLoadResult>;
  /**
   * Chorus' edge alone (no processor): CPU per ACKNOWLEDGED session, nothing stored. What the
   * session costs before any processor or store work: the part of Chorus' cost no change to the
   * processors can remove.
   */
  edgeAlone: CostResult<SessionLoadResult>;
  /**
   * The log-first floor of a session (session-floor.ts): CPU per stored session of a bare endpoint
   * and consumer doing only the Kafka writes, reads and facts and one statement per batch. What
   * Chorus' own work costs is its distance from this.
   */
  floor: CostResult<SessionLoadResult>;
}

export interface SessionRatios {
  /** Chorus' sessions per second / the baseline's (issue 37: ≥ 1.5). */
  sessionsToBaseline: number;
  /** Chorus' CPU per stored session / the baseline's (issue 37: ≤ 0.7). */
  costToBaseline: number;
  /** The edge alone's CPU per acknowledged session / the baseline's per stored one. */
  edgeAloneToBaseline: number;
  /** The log-first floor's CPU per stored session / the baseline's. */
  floorToBaseline: number;
  /** Chorus' CPU per stored session / the floor's: what Chorus' own work multiplies. */
  costToFloor: number;
}

export function sessionRatios({ baseline, chorus, edgeAlone, floor }: SessionRound): SessionRatios {
  return {
    sessionsToBaseline: chorus.load.sessionsPerSecond / baseline.load.sessionsPerSecond,
    costToBaseline: chorus.cpuMicrosPerRow / baseline.cpuMicrosPerRow,
    edgeAloneToBaseline: edgeAlone.cpuMicrosPerRow / baseline.cpuMicrosPerRow,
    floorToBaseline: floor.cpuMicrosPerRow / baseline.cpuMicrosPerRow,
    costToFloor: chorus.cpuMicrosPerRow / floor.cpuMicrosPerRow,
  };
}

export async function measureSessionRounds(
  bench: ResponseBenchWorld,
  settings: SessionSettings,
  logger: Logger,
): Promise<SessionRound[]> {
  const rounds: SessionRound[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const world = await bench.another();
    try {
      const measure = {
        baseline: () => baselineSessions(world, settings),
        chorus: () => chorusSessions(world, settings),
      };
      const order = round % 2 === 0 ? (['baseline', 'chorus'] as const) : (['chorus', 'baseline'] as const);
      const results: Partial<SessionRound> = {};
      for (const target of order) results[target] = await measure[target]();
      results.edgeAlone = await edgeAloneSessions(world, settings);
      results.floor = await floorSessions(world, settings, logger);
      rounds.push(results as SessionRound);
    } finally {
      await world.stop();
    }
  }
  return rounds;
}

function sessionLoad(options: SessionLoadOptions): () => Promise<CostLoad<SessionLoadResult>> {
  return async () => {
    const result = await runSessionLoad(options);
    if (result.sessions === 0) throw new Error(`no session completed: ${result.firstFailure ?? 'no answer'}`);
    // A session under way when the time is up runs to its end: each complete one is a finished
    // response acknowledged (a failed one is not counted).
    return { result, cpuTicks: result.cpuTicks, acknowledgedRows: result.sessions };
  };
}

/** The session load of `settings` against the server on `port`, for `durationS` seconds. */
function sessionsAt(port: number, world: ResponseBenchWorld, settings: SessionSettings) {
  return (durationS: number) =>
    sessionLoad({
      origin: `http://127.0.0.1:${port}`,
      environmentId: world.environmentId,
      surveyId: world.surveyId,
      connections: settings.connections,
      durationS,
      users: settings.users,
    });
}

/** Runs `measure` against `chorus start --role <role>` on a port of its own, ready, then stops it. */
async function withChorus<R>(
  role: 'all' | 'edge',
  world: ResponseBenchWorld,
  settings: SessionSettings,
  measure: (port: number, pid: number) => Promise<R>,
): Promise<R> {
  const port = await freePort();
  const chorus = startChorusProcess(role, world.world.env, port);
  try {
    await chorus.ready(settings.readyTimeoutMs);
    return await measure(port, chorus.pid);
  } finally {
    await chorus.stop();
  }
}

/** The survey as the baseline and the floor serve it in the environment state. */
const surveyOf = (world: ResponseBenchWorld) => ({
  id: world.surveyId,
  body: { id: world.surveyId, type: 'app', status: 'inProgress' },
});

async function baselineSessions(
  world: ResponseBenchWorld,
  settings: SessionSettings,
): Promise<CostResult<SessionLoadResult>> {
  const baseline = await startBaselineSessionServer(
    world.world.databaseUrl,
    world.environmentId,
    surveyOf(world),
  );
  try {
    const load = sessionsAt(baseline.port, world, settings);
    await load(settings.warmUpS)();
    return (await measureCost({
      load: load(settings.durationS),
      countRows: () => baseline.countFinished(),
      ownProcesses: () => new Map([[process.pid, 'baseline server']]),
      drainTimeoutMs: 10_000,
    }))!;
  } finally {
    await baseline.close();
  }
}

/** Sessions through `chorus start --role edge`: what is acknowledged is counted, nothing is stored. */
function edgeAloneSessions(
  world: ResponseBenchWorld,
  settings: SessionSettings,
): Promise<CostResult<SessionLoadResult>> {
  return withChorus('edge', world, settings, async (port, pid) => {
    const load = sessionsAt(port, world, settings);
    await load(settings.warmUpS)();
    let acknowledged = 0;
    const measured = load(settings.durationS);
    return (await measureCost({
      load: async () => {
        const result = await measured();
        acknowledged += result.acknowledgedRows;
        return result;
      },
      countRows: async () => acknowledged,
      ownProcesses: () => rolesOf(pid),
      drainTimeoutMs: 1_000,
    }))!;
  });
}

function chorusSessions(
  world: ResponseBenchWorld,
  settings: SessionSettings,
): Promise<CostResult<SessionLoadResult>> {
  return withChorus('all', world, settings, async (port, pid) => {
    const load = sessionsAt(port, world, settings);
    const deadlineMs = Math.max(60, 10 * settings.durationS) * 1000;
    const warmUp = await load(settings.warmUpS)();
    // Stored before the measured load starts, so that the warm-up's are not counted in it.
    await waitForRows(world.countFinished, warmUp.result.sessions, Date.now() + deadlineMs, {
      settleMs: 1_000,
    });
    return (await measureCost({
      load: load(settings.durationS),
      countRows: world.countFinished,
      ownProcesses: () => rolesOf(pid),
      drainTimeoutMs: deadlineMs,
    }))!;
  });
}

/** Sessions through the log-first floor, in this process; its warm-up stored before the measured load. */
async function floorSessions(
  world: ResponseBenchWorld,
  settings: SessionSettings,
  logger: Logger,
): Promise<CostResult<SessionLoadResult>> {
  const floor = await startSessionFloor(world.world.env, world.world.databaseUrl, surveyOf(world), logger);
  try {
    const load = sessionsAt(floor.port, world, settings);
    const finished = () => Promise.resolve(floor.finished());
    const warmUp = await load(settings.warmUpS)();
    await waitForRows(finished, warmUp.result.sessions, Date.now() + 60_000, { settleMs: 1_000 });
    return (await measureCost({
      load: load(settings.durationS),
      countRows: finished,
      ownProcesses: () => new Map([[process.pid, 'log-first floor']]),
      drainTimeoutMs: 60_000,
    }))!;
  } finally {
    await floor.close();
  }
}
