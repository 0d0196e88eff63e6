// What a stored response costs the machine: the busy CPU time of the whole machine (every core,
// whoever used it) minus the load tool's, from the start of a load until the last acknowledged
// response is a row (the drain: a log-first service stores after it answers), divided by the rows
// stored. Broken down by process: the server's own (Chorus by role, or the baseline, which runs in
// the bench process), the Kafka broker, PostgreSQL, Redis, and what is left ("other": the kernel's
// softirq work for loopback traffic, and anything else running).
//
// The load is a process of its own whose CPU is read and taken off: wrk with one thread (`wrk -t1`)
// for single requests (a load generator in Node would cost more than some of the servers it loads),
// the session generator (session-load.ts) for visitors' sessions.
import { readdirSync, readFileSync } from 'node:fs';
import { readOr, ticksIn, TICKS_PER_SECOND } from './processes.ts';
import { runWrk, type WrkResult } from './wrk.ts';

/** What a load run tells the cost measurement. */
export interface CostLoad<R> {
  result: R;
  /** The load tool's own CPU time, in clock ticks. */
  cpuTicks: number;
  /** Rows the target should hold once it has stored everything it acknowledged. */
  acknowledgedRows: number;
}

export interface CostOptions<R> {
  /** Runs the load; undefined when its tool is missing. */
  load: () => Promise<CostLoad<R> | undefined>;
  /** Rows of the table the target stores into. */
  countRows: () => Promise<number>;
  /** The target's own processes by name (e.g. `edge`, `processor`); others are found by name. */
  ownProcesses: () => Map<number, string>;
  /** How long the drain may take after the load ended. */
  drainTimeoutMs: number;
}

export interface CostResult<R = WrkResult> {
  /** The load run (e.g. wrk's figures: requests answered during the load). */
  load: R;
  rows: number;
  /** From the start of the load until the row count stopped growing (or reached the 2xx count). */
  seconds: number;
  rowsPerSecond: number;
  /** Machine busy CPU minus the load tool, per stored row. */
  cpuMicrosPerRow: number;
  /** CPU µs per stored row by process group (`other` is the machine's rest). */
  byProcess: Record<string, number>;
  /** The load tool's CPU per row, not included above. */
  loadToolMicrosPerRow: number;
  complete: boolean;
}

/** `wrk -t1` POSTing `body` to `url`: one row per 2xx answer; undefined without wrk. */
export function wrkLoad(options: {
  url: string;
  body: string;
  connections: number;
  durationS: number;
}): () => Promise<CostLoad<WrkResult> | undefined> {
  return async () => {
    const result = await runWrk(options, { threads: 1 });
    return (
      result && {
        result,
        cpuTicks: result.cpuTicks,
        acknowledgedRows: result.total - result.non2xx - result.errors,
      }
    );
  };
}

/** Runs the load and accounts the machine's CPU per stored row; undefined without its load tool. */
export async function measureCost<R>(options: CostOptions<R>): Promise<CostResult<R> | undefined> {
  const rowsBefore = await options.countRows();
  const machineBefore = machineBusyTicks();
  const processesBefore = processTicks(options.ownProcesses());
  const startedAt = Date.now();
  const load = await options.load();
  if (!load) return undefined;
  const wrkTicks = load.cpuTicks;
  const target = rowsBefore + load.acknowledgedRows;
  const drained = await waitForRows(options.countRows, target, Date.now() + options.drainTimeoutMs, {
    stallMs: 3000,
  });
  const machineAfter = machineBusyTicks();
  const processesAfter = processTicks(options.ownProcesses());
  const rows = drained.rows - rowsBefore;
  const perRow = (ticks: number) => (rows > 0 ? ((ticks / TICKS_PER_SECOND) * 1e6) / rows : 0);

  const byProcess: Record<string, number> = {};
  let named = 0;
  for (const [group, ticks] of ticksByGroup(processesBefore, processesAfter)) {
    byProcess[group] = perRow(ticks);
    named += ticks;
  }
  const busy = machineAfter - machineBefore - wrkTicks;
  byProcess.other = perRow(Math.max(0, busy - named));
  const seconds = (drained.at - startedAt) / 1000;
  return {
    load: load.result,
    rows,
    seconds,
    rowsPerSecond: rows / seconds,
    cpuMicrosPerRow: perRow(busy),
    byProcess,
    loadToolMicrosPerRow: perRow(wrkTicks),
    complete: drained.complete,
  };
}

/** Busy ticks of all cores (user, nice, system, irq, softirq, steal) from /proc/stat. */
function machineBusyTicks(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return user! + nice! + system! + irq! + softirq! + (steal ?? 0);
}

/**
 * CPU ticks of the processes that matter, keyed `group\0pid`: the target's own, the Kafka broker,
 * PostgreSQL and Redis, and the bench itself (which is the baseline server when it is loaded).
 */
export function processTicks(own: Map<number, string>): Map<string, number> {
  const groups = new Map<number, string>(own);
  groups.set(process.pid, groups.get(process.pid) ?? 'bench');
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || groups.has(pid)) continue;
    const group = groupOf(pid);
    if (group) groups.set(pid, group);
  }
  const ticks = new Map<string, number>();
  for (const [pid, group] of groups) {
    const t = ticksOf(pid);
    if (t !== undefined) ticks.set(`${group}\0${pid}`, t);
  }
  return ticks;
}

/** The ticks each group of processes used between two readings of processTicks. */
export function ticksByGroup(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const groups = new Map<string, number>();
  for (const [key, ticks] of after) {
    const group = key.slice(0, key.indexOf('\0'));
    groups.set(group, (groups.get(group) ?? 0) + Math.max(0, ticks - (before.get(key) ?? 0)));
  }
  return groups;
}

function groupOf(pid: number): string | undefined {
  const comm = readOr(`/proc/${pid}/comm`).trim();
  if (comm === 'postgres') return 'postgresql';
  if (comm === 'redis-server') return 'redis';
  if (comm === 'java' && readOr(`/proc/${pid}/cmdline`).includes('kafka.Kafka')) return 'kafka broker';
  return undefined;
}

/** utime + stime of a process, in ticks (its own, not its children's). */
function ticksOf(pid: number): number | undefined {
  const stat = readOr(`/proc/${pid}/stat`);
  return stat ? ticksIn(stat) : undefined;
}

/**
 * Polls the row count until it reaches `target` (and has not changed for `settleMs`), until it stops
 * growing for `stallMs`, or until the deadline (epoch ms) passes. `at` is when the count last
 * changed (within the 50 ms of a poll).
 */
export async function waitForRows(
  count: () => Promise<number>,
  target: number,
  deadline: number,
  { settleMs = 0, stallMs = Infinity } = {},
): Promise<{ rows: number; at: number; complete: boolean }> {
  let last = -1;
  let changedAt = Date.now();
  for (;;) {
    const rows = await count();
    const now = Date.now();
    if (rows !== last) [last, changedAt] = [rows, now];
    if (rows >= target && now - changedAt >= settleMs) return { rows, at: changedAt, complete: true };
    if (now > deadline || now - changedAt > stallMs) return { rows, at: changedAt, complete: false };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
