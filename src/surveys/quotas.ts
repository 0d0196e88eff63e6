// Which quotas a response falls into: pure rules, shared by the edge (answering `quotaFull`) and
// the response processor (counting).
//
// A criterion on a choice question names the choice by its id or its label, and an answer names it
// by its id or by its label in the respondent's language (the widget sends labels): both are
// resolved against the survey's questions, so any spelling of the same choice matches.
import type { Element, Quota, QuotaCriterion } from './definition.ts';
import { choiceSpellings, isAnswered } from './validate-answers.ts';

/** A string, number or boolean answer as text; anything else has no scalar value. */
const scalar = (v: unknown) => (['string', 'number', 'boolean'].includes(typeof v) ? String(v) : undefined);

/**
 * The spellings of a criterion's value: for a choice, its id and every label; otherwise the value as
 * text. Kept per criterion: a cached survey's quotas serve every response to it.
 */
const spellingsByCriterion = new WeakMap<QuotaCriterion, ReadonlySet<string>>();
function spellingsOf(criterion: QuotaCriterion, questions: readonly Element[]): ReadonlySet<string> {
  let spellings = spellingsByCriterion.get(criterion);
  if (!spellings) {
    const value = scalar(criterion.value);
    const question = questions.find((q) => q.id === criterion.questionId);
    spellings = new Set(value === undefined ? [] : (choiceSpellings(question, value) ?? [value]));
    spellingsByCriterion.set(criterion, spellings);
  }
  return spellings;
}

type Operator = (answer: unknown, value: ReadonlySet<string>, criterion: QuotaCriterion) => boolean;

const named = (answer: unknown, value: ReadonlySet<string>) => {
  const text = scalar(answer);
  return text !== undefined && value.has(text);
};

const OPERATORS: Record<QuotaCriterion['operator'], Operator> = {
  equals: named,
  notEquals: (answer, value) => !named(answer, value),
  includes: (answer, value) =>
    Array.isArray(answer)
      ? answer.some((item) => named(item, value))
      : [...value].some((spelling) => (scalar(answer) ?? '').includes(spelling)),
  greaterThan: (answer, _, { value }) => Number(answer) > Number(value),
  lessThan: (answer, _, { value }) => Number(answer) < Number(value),
  isSubmitted: (answer) => isAnswered(answer),
  isSkipped: (answer) => !isAnswered(answer),
};

/** A quota without conditions takes every response. `questions`: its survey's. */
export function matchesQuota(
  quota: Quota,
  data: Readonly<Record<string, unknown>>,
  questions: readonly Element[],
): boolean {
  const criteria = quota.conditions?.criteria ?? [];
  if (criteria.length === 0) return true;
  const results = criteria.map((c) =>
    OPERATORS[c.operator](data[c.questionId], spellingsOf(c, questions), c),
  );
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
  survey: { quotas: readonly Quota[]; fullQuotaIds: readonly string[]; questions: readonly Element[] },
  data: Readonly<Record<string, unknown>>,
): Quota | undefined {
  return survey.quotas.find(
    (q) => survey.fullQuotaIds.includes(q.id) && matchesQuota(q, data, survey.questions),
  );
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
