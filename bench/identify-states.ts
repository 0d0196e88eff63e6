// Identify in the states the store goes through: while the processors drain a backlog (as after an
// outage: responses acknowledged by the edge alone, then the whole service started), and once it is
// stored. Rounds of three wrk runs, one after the other on `chorus start`: response creates, then
// identifies of new users, then identifies of returning ones (each identify with a number
// attribute); each round's ratio is its identifies per second over its creates per second.
// The backlog is BENCH_BACKLOG_S of creates at full rate (about 14,000 a second on the bench's
// machines: 70 s makes a million).
import { freePort } from '../test/helpers/local-kafka.ts';
import { waitForRows } from './cost.ts';
import { sampleTree, startChorusProcess, type ProcessUsage } from './processes.ts';
import { runWrk, type WrkResult } from './wrk.ts';
import type { ResponseBenchWorld } from './world.ts';

export interface IdentifyStatesSettings {
  backlogS: number;
  roundS: number;
  connections: number;
  /** Rounds once everything acknowledged is stored. */
  storedRounds: number;
  /** Rounds at most while the backlog drains. */
  maxDrainingRounds: number;
  readyTimeoutMs: number;
}

export interface IdentifyStateRound {
  state: 'draining' | 'stored';
  /** Responses acknowledged and not yet stored when the round started. */
  backlogAtStart: number;
  creates: WrkResult;
  identifyNew: WrkResult;
  identifyReturning: WrkResult;
  newToCreates: number;
  returningToCreates: number;
  /** CPU of each Chorus process over the round, in cores. */
  processes: ProcessUsage[];
}

export interface IdentifyStates {
  /** Responses acknowledged by the edge alone before the whole service started. */
  backlog: number;
  rounds: IdentifyStateRound[];
}

export async function measureIdentifyStates(
  bench: ResponseBenchWorld,
  settings: IdentifyStatesSettings,
): Promise<IdentifyStates | undefined> {
  const world = await bench.another();
  try {
    const wrk = (port: number, path: string, body: string, durationS = settings.roundS) =>
      runWrk({ url: `http://127.0.0.1:${port}${path}`, body, connections: settings.connections, durationS });

    let acknowledged = 0;
    const edgePort = await freePort();
    const edge = startChorusProcess('edge', world.world.env, edgePort);
    try {
      await edge.ready(settings.readyTimeoutMs);
      const backlog = await wrk(edgePort, world.path, world.body, settings.backlogS);
      if (!backlog) return undefined;
      acknowledged += backlog.total - backlog.non2xx - backlog.errors;
    } finally {
      await edge.stop();
    }
    const backlog = acknowledged;

    const port = await freePort();
    const chorus = startChorusProcess('all', world.world.env, port);
    try {
      await chorus.ready(settings.readyTimeoutMs);
      const rounds: IdentifyStateRound[] = [];
      const round = async (state: IdentifyStateRound['state']) => {
        const backlogAtStart = Math.max(0, acknowledged - (await world.countRows()));
        const sampler = sampleTree(chorus.pid);
        const creates = (await wrk(port, world.path, world.body))!;
        acknowledged += creates.total - creates.non2xx - creates.errors;
        const identifyNew = (await wrk(port, world.identify.path, world.identify.body))!;
        const identifyReturning = (await wrk(port, world.identify.path, world.identify.returningBody))!;
        rounds.push({
          state,
          backlogAtStart,
          creates,
          identifyNew,
          identifyReturning,
          newToCreates: identifyNew.requestsPerSecond / creates.requestsPerSecond,
          returningToCreates: identifyReturning.requestsPerSecond / creates.requestsPerSecond,
          processes: sampler.stop(),
        });
      };
      for (let n = 0; n < settings.maxDrainingRounds; n++) {
        if ((await world.countRows()) >= acknowledged) break;
        await round('draining');
      }
      for (let n = 0; n < settings.storedRounds; n++) {
        // Each round's own creates stored first: the round starts with nothing left to drain.
        const deadline = Date.now() + 600_000;
        if (!(await waitForRows(world.countRows, acknowledged, deadline, { settleMs: 1_000 })).complete)
          break;
        await round('stored');
      }
      return { backlog, rounds };
    } finally {
      await chorus.stop();
    }
  } finally {
    await world.stop();
  }
}

/** One line per round: its state, its backlog, creates and identifies per second, the ratios. */
export function identifyStatesTable(states: IdentifyStates | undefined, targetRatio = 0.5): string[] {
  if (!states) return ['Identify in the states of the store: needs wrk (Debian package `wrk`).', ''];
  const number = (n: number, digits = 0) =>
    n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const header = [
    'round',
    'backlog at start',
    'creates/s',
    'identify new/s',
    'returning/s',
    'new / creates',
    'returning / creates',
    'identify p99 ms',
  ];
  const rows = states.rounds.map((r, i) => [
    `${i + 1} ${r.state}`,
    number(r.backlogAtStart),
    number(r.creates.requestsPerSecond),
    number(r.identifyNew.requestsPerSecond),
    number(r.identifyReturning.requestsPerSecond),
    number(r.newToCreates, 2),
    number(r.returningToCreates, 2),
    `${number(r.identifyNew.latencyP99Ms)}; ${number(r.identifyReturning.latencyP99Ms)}`,
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const lowest = Math.min(...states.rounds.flatMap((r) => [r.newToCreates, r.returningToCreates]));
  return [
    `Identify in the states of the store: ${number(states.backlog)} responses acknowledged by the edge alone, ` +
      'then `chorus start`; rounds of creates, identifies of new users, identifies of returning users (wrk)',
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `Lowest identifies / creates of any round: ${number(lowest, 2)} (target ≥ ${targetRatio})`,
    '',
  ];
}
