// The fold of commands into a response's state (state.ts) — a pure function, the single definition
// of how partial responses become finished ones. Its rules are written as data below. The
// processor folds commands with it; the edge updates the status it caches with the same rules
// (status.ts); the store persists the state.
import type { ResponseCommand, ResponseCreated } from '../events/responses.ts';
import type { Rejected } from '../events/dead-letters.ts';
import type { RejectionReason, ResponseState } from './state.ts';

export type { RejectionReason, ResponseState } from './state.ts';

export type MergeOutcome =
  | { kind: 'applied'; state: ResponseState }
  | { kind: 'rejected'; reason: RejectionReason; state: ResponseState | undefined };

/** How each updatable field of a response changes when an update carries it. */
const RULES = {
  /** Shallow merge: keys sent overwrite, keys not sent are kept. */
  merged: ['data', 'ttc', 'variables'],
  /** Last writer wins, when present. */
  overwritten: ['language', 'endingId'],
  /** `finished` only goes from false to true; any update after that is rejected. */
} as const;

export function mergeResponse(state: ResponseState | undefined, command: ResponseCommand): MergeOutcome {
  if (command.type === 'response.created') {
    if (state) return { kind: 'rejected', reason: 'response_already_exists', state };
    return { kind: 'applied', state: withTotal(created(command)) };
  }
  if (!state) return { kind: 'rejected', reason: 'response_not_found', state };
  if (state.finished) return { kind: 'rejected', reason: 'response_already_finished', state };

  const next: ResponseState = { ...state, updatedAt: command.occurredAt };
  for (const field of RULES.merged) {
    const patch = command[field];
    if (patch) next[field] = mergeShallow(state[field], patch) as never;
  }
  for (const field of RULES.overwritten) {
    const value = command[field];
    if (value !== undefined) next[field] = value;
  }
  next.finished = finishedAfter(state.finished, command.finished);
  return { kind: 'applied', state: withTotal(next) };
}

/** The merge of `data`, `ttc` and `variables`: keys sent overwrite, keys not sent are kept. */
export function mergeShallow<V>(
  before: Readonly<Record<string, V>>,
  patch: Readonly<Record<string, V>> | undefined,
): Record<string, V> {
  return patch ? { ...before, ...patch } : { ...before };
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
  commands: readonly ResponseCommand[],
): {
  state: ResponseState | undefined;
  applied: { command: ResponseCommand; state: ResponseState }[];
  rejected: Rejected<ResponseCommand, RejectionReason>[];
} {
  const applied: { command: ResponseCommand; state: ResponseState }[] = [];
  const rejected: Rejected<ResponseCommand, RejectionReason>[] = [];
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
    createdAt: command.occurredAt,
    updatedAt: command.occurredAt,
  };
}

/** A finished response carries `ttc._total`, the sum of the time spent on each question. */
function withTotal(state: ResponseState): ResponseState {
  if (!state.finished) return state;
  const total = Object.entries(state.ttc)
    .filter(([key]) => key !== '_total')
    .reduce((sum, [, seconds]) => sum + seconds, 0);
  return { ...state, ttc: { ...state.ttc, _total: total } };
}
