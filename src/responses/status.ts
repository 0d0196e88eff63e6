// What the edge keeps of a response to answer its updates synchronously (refuse one after finish,
// check required answers when one finishes it, tell `quotaFull` from the merged answers): a
// projection of the response's state, updated by the same rules the processor folds with.
import { isAnswered } from '../surveys/validate-answers.ts';
import { quotaAnswersOf } from '../surveys/quotas.ts';
import type { Quota } from '../surveys/definition.ts';
import { finishedAfter, mergeShallow } from './merge.ts';

export interface ResponseStatus {
  environmentId: string;
  surveyId: string;
  finished: boolean;
  /** Question ids that have an answer (for the required check when an update finishes it). */
  answered: readonly string[];
  /**
   * The answers the survey's quota conditions read (see `quotaAnswersOf`), so that an update is told
   * `quotaFull` from the merged response, not only from what it sent. Filtered by the quotas known
   * when the entry was made: a quota added later sees older answers once the entry is reloaded.
   */
  quotaAnswers: Readonly<Record<string, unknown>>;
  /** Deleted through the management API: its updates are refused as not found. */
  deleted?: true;
}

const NOTHING: readonly string[] = Object.freeze([]);
const NO_ANSWERS: Readonly<Record<string, unknown>> = Object.freeze({});

/** The status of a response as stored (or as its create will store it). */
export function statusOf(
  response: {
    environmentId: string;
    surveyId: string;
    finished: boolean;
    data: Readonly<Record<string, unknown>>;
  },
  quotas: readonly Quota[] | undefined,
): ResponseStatus {
  if (response.finished) return finishedStatus(response.environmentId, response.surveyId);
  return {
    environmentId: response.environmentId,
    surveyId: response.surveyId,
    finished: false,
    answered: Object.keys(response.data).filter((key) => isAnswered(response.data[key])),
    quotaAnswers: quotas ? quotaAnswersOf(quotas, response.data) : NO_ANSWERS,
  };
}

/**
 * The status after an update: its answers merged as the processor merges `data` (sent keys
 * overwrite), `finished` as the processor sets it. `quotas` is the survey's, when it still exists.
 */
export function statusAfterUpdate(
  status: ResponseStatus,
  update: { data?: Readonly<Record<string, unknown>>; finished?: boolean },
  quotas: readonly Quota[] | undefined,
): ResponseStatus {
  if (finishedAfter(status.finished, update.finished))
    return finishedStatus(status.environmentId, status.surveyId);
  const answered = new Set(status.answered);
  for (const [key, value] of Object.entries(update.data ?? {})) {
    if (isAnswered(value)) answered.add(key);
    else answered.delete(key);
  }
  return {
    ...status,
    answered: [...answered],
    quotaAnswers: quotas
      ? quotaAnswersOf(quotas, mergeShallow(status.quotaAnswers, update.data))
      : status.quotaAnswers,
  };
}

/** What the edge keeps of a deleted response until the processor removed it from the store. */
export function deletedStatus(environmentId: string, surveyId: string): ResponseStatus {
  return { ...finishedStatus(environmentId, surveyId), deleted: true };
}

/**
 * What the edge keeps of a finished response: enough to refuse its updates. A cache of the last
 * minute's responses holds many of them, so they share their (empty) answers.
 */
function finishedStatus(environmentId: string, surveyId: string): ResponseStatus {
  return { environmentId, surveyId, finished: true, answered: NOTHING, quotaAnswers: NO_ANSWERS };
}
