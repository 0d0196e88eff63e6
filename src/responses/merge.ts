// The fold of commands into a response's state (state.ts) — a pure function, the single definition
// of how partial responses become finished ones. Its rules are written as data below. The
// processor folds commands with it; the edge updates the status it caches with the same rules
// (status.ts); the store persists the state.
//
// Commands are merged by the edge's clock (events/clock.ts), not by arrival: every key remembers
// the clock of the command that set it, and a command changes only the keys no later command set.
// So a response's commands give the same state in whatever order they are applied, as long as its
// create comes first (the processor parks the others until it does). In order, this is simply
// "sent keys overwrite, keys not sent are kept".
import type { ResponseChange, ResponseCreated } from '../events/responses.ts';
import type { Rejected } from '../events/dead-letters.ts';
import { clockOf } from '../events/clock.ts';
import type { RejectionReason, ResponseClocks, ResponseState } from './state.ts';

export type { RejectionReason, ResponseState } from './state.ts';

export type MergeOutcome =
  | { kind: 'applied'; state: ResponseState }
  | { kind: 'rejected'; reason: RejectionReason; state: ResponseState | undefined };

/** How each updatable field of a response changes when an update carries it. */
const RULES = {
  /** Shallow merge: keys sent overwrite (unless a later command set them), keys not sent are kept. */
  merged: ['data', 'ttc', 'variables'],
  /** Last writer (by clock) wins, when present. */
  overwritten: ['language', 'endingId'],
  /**
   * `finished` only goes from false to true; an update accepted after the finish is rejected (but
   * a management update, `amendsFinished`), one accepted before it (and applied late) is merged.
   */
} as const;

export function mergeResponse(state: ResponseState | undefined, command: ResponseChange): MergeOutcome {
  if (command.type === 'response.created') {
    if (state) return { kind: 'rejected', reason: 'response_already_exists', state };
    return { kind: 'applied', state: withTotal(created(command)) };
  }
  if (!state) return { kind: 'rejected', reason: 'response_not_found', state };
  const clock = clockOf(command);
  const { clocks } = state;
  if (state.finished && !command.amendsFinished && clock >= (clocks.finished ?? 0))
    return { kind: 'rejected', reason: 'response_already_finished', state };

  const next: ResponseState = {
    ...state,
    updatedAt: command.occurredAt > state.updatedAt ? command.occurredAt : state.updatedAt,
    clocks: Object.assign({}, clocks),
  };
  const setBefore = clocks.created ?? 0;
  for (const field of RULES.merged) {
    const patch = command[field];
    if (!patch) continue;
    const merged = mergeByClock(state[field], clocks[field], setBefore, patch, clock);
    next[field] = merged.values as never;
    next.clocks[field] = merged.clocks;
  }
  for (const field of RULES.overwritten) {
    const value = command[field];
    if (value !== undefined && clock >= (clocks[field] ?? setBefore)) {
      next[field] = value;
      next.clocks[field] = clock;
    }
  }
  if (command.finished === true) {
    next.finished = true;
    next.clocks.finished = Math.min(clocks.finished ?? clock, clock);
  }
  return { kind: 'applied', state: withTotal(next) };
}

/**
 * Sent keys overwrite those set before `clock` (a key without a clock was set at `setBefore`), and
 * take `clock`; keys a later command set, and keys not sent, are kept.
 */
function mergeByClock<V>(
  before: Readonly<Record<string, V>>,
  clocks: Readonly<Record<string, number>> | undefined,
  setBefore: number,
  patch: Readonly<Record<string, V>>,
  clock: number,
): { values: Record<string, V>; clocks: Record<string, number> } {
  const values: Record<string, V> = Object.assign({}, before);
  const nextClocks: Record<string, number> = Object.assign({}, clocks);
  for (const [key, value] of Object.entries(patch)) {
    if (clock < (nextClocks[key] ?? setBefore)) continue;
    values[key] = value;
    nextClocks[key] = clock;
  }
  return { values, clocks: nextClocks };
}

/** The merge of `data`, `ttc` and `variables` in order: keys sent overwrite, keys not sent are kept. */
export function mergeShallow<V>(
  before: Readonly<Record<string, V>>,
  patch: Readonly<Record<string, V>> | undefined,
): Record<string, V> {
  return Object.assign({}, before, patch);
}

/** `finished` only goes from false to true. */
export function finishedAfter(finished: boolean, sent: boolean | undefined): boolean {
  return finished || sent === true;
}

/**
 * Applies commands in order; rejected ones leave the state as it was and are reported. `applied`
 * lists each applied command with the state right after it.
 */
export function foldResponse(
  state: ResponseState | undefined,
  commands: readonly ResponseChange[],
): {
  state: ResponseState | undefined;
  applied: { command: ResponseChange; state: ResponseState }[];
  rejected: Rejected<ResponseChange, RejectionReason>[];
} {
  const applied: { command: ResponseChange; state: ResponseState }[] = [];
  const rejected: Rejected<ResponseChange, RejectionReason>[] = [];
  for (const command of commands) {
    const outcome = mergeResponse(state, command);
    if (outcome.kind === 'applied') {
      state = outcome.state;
      applied.push({ command, state });
    } else rejected.push({ command, reason: outcome.reason });
  }
  return { state, applied, rejected };
}

function created(command: ResponseCreated): ResponseState {
  const clock = clockOf(command);
  const clocks: ResponseClocks = { created: clock };
  if (command.finished) clocks.finished = clock;
  return {
    id: command.responseId,
    environmentId: command.environmentId,
    surveyId: command.surveyId,
    finished: command.finished,
    data: command.data,
    ttc: command.ttc,
    variables: command.variables,
    meta: command.meta,
    language: command.language ?? null,
    endingId: command.endingId ?? null,
    displayId: command.displayId ?? null,
    singleUseId: command.singleUseId ?? null,
    contactId: command.contactId ?? null,
    contactAttributes: null,
    createdAt: command.createdAt ?? command.occurredAt,
    updatedAt: command.updatedAt ?? command.createdAt ?? command.occurredAt,
    clocks,
  };
}

/** A finished response carries `ttc._total`, the sum of the time spent on each question. */
function withTotal(state: ResponseState): ResponseState {
  if (!state.finished) return state;
  const total = Object.entries(state.ttc)
    .filter(([key]) => key !== '_total')
    .reduce((sum, [, seconds]) => sum + seconds, 0);
  return { ...state, ttc: Object.assign({}, state.ttc, { _total: total }) };
}
