// Which quotas a response falls into: pure rules, shared by the edge (answering `quotaFull`) and
// the response processor (counting).
import type { Quota, QuotaCriterion } from './definition.ts';
import { isAnswered } from './validate-answers.ts';

/** A string, number or boolean answer as text; anything else has no scalar value. */
const scalar = (v: unknown) => (['string', 'number', 'boolean'].includes(typeof v) ? String(v) : undefined);

const OPERATORS: Record<QuotaCriterion['operator'], (answer: unknown, value: unknown) => boolean> = {
  equals: (answer, value) => scalar(answer) !== undefined && scalar(answer) === scalar(value),
  notEquals: (answer, value) => !OPERATORS.equals(answer, value),
  includes: (answer, value) =>
    Array.isArray(answer)
      ? answer.includes(value)
      : (scalar(answer) ?? '').includes(scalar(value) ?? '\u0000'),
  greaterThan: (answer, value) => Number(answer) > Number(value),
  lessThan: (answer, value) => Number(answer) < Number(value),
  isSubmitted: (answer) => isAnswered(answer),
  isSkipped: (answer) => !isAnswered(answer),
};

/** A quota without conditions takes every response. */
export function matchesQuota(quota: Quota, data: Readonly<Record<string, unknown>>): boolean {
  const criteria = quota.conditions?.criteria ?? [];
  if (criteria.length === 0) return true;
  const results = criteria.map((c) => OPERATORS[c.operator](data[c.questionId], c.value));
  return quota.conditions?.connector === 'or' ? results.some(Boolean) : results.every(Boolean);
}

/**
 * The answers a survey's quota conditions read, and nothing else: what the edge keeps of a response
 * to re-check its quotas after an update merges new answers in (whole answers can be megabytes).
 */
export function quotaAnswersOf(
  quotas: readonly Quota[],
  data: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const read = new Set(quotas.flatMap((q) => q.conditions?.criteria.map((c) => c.questionId) ?? []));
  return Object.fromEntries(Object.entries(data).filter(([questionId]) => read.has(questionId)));
}

/** Whether a response in this state is counted: finished ones always, partial ones if asked. */
export function countsTowards(quota: Quota, finished: boolean): boolean {
  return finished || quota.countPartialSubmissions === true;
}

/** The first full quota this response falls into, if any (what the client is told). */
export function fullQuotaFor(
  survey: { quotas: readonly Quota[]; fullQuotaIds: readonly string[] },
  data: Readonly<Record<string, unknown>>,
): Quota | undefined {
  return survey.quotas.find((q) => survey.fullQuotaIds.includes(q.id) && matchesQuota(q, data));
}

/** The `quotaFull` part of a create/update answer. */
export function quotaAnswer(quota: Quota | undefined) {
  if (!quota) return { quotaFull: false };
  return {
    quotaFull: true,
    quota: {
      id: quota.id,
      action: quota.action,
      ...(quota.endingCardId ? { endingCardId: quota.endingCardId } : {}),
    },
  };
}
