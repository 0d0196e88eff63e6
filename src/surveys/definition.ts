// The shape of a survey definition as the edge and the processors read it: blocks of elements
// (questions), legacy `questions`, endings and quotas. Only the fields Chorus acts on are typed;
// everything else a client stores in a survey is kept as it was sent.
import Type, { type Static } from 'typebox';

/**
 * Bounds on a definition's lists, far above any real survey: every response is checked against its
 * survey, and quotas are counted in the processor's transaction, so a definition without bounds
 * would let one write key make every response to it slow (tens of seconds for 40,000 questions or
 * 5,000 quotas).
 */
export const DEFINITION_LIMITS = {
  questions: 1000,
  choices: 1000,
  endings: 100,
  quotas: 50,
  criteria: 50,
} as const;
const list = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) =>
  Type.Array(item, { maxItems });

/** A choice, row or column: answered by its id or by its label (a string, or `{language: text}`). */
const Choice = Type.Object(
  { id: Type.String(), label: Type.Optional(Type.Unknown()), imageUrl: Type.Optional(Type.Unknown()) },
  { additionalProperties: true },
);

export const Element = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.String({ minLength: 1 }),
    headline: Type.Optional(Type.Unknown()),
    required: Type.Optional(Type.Boolean()),
    choices: Type.Optional(list(Choice, DEFINITION_LIMITS.choices)),
    rows: Type.Optional(list(Choice, DEFINITION_LIMITS.choices)),
    columns: Type.Optional(list(Choice, DEFINITION_LIMITS.choices)),
    range: Type.Optional(Type.Number()),
    allowMultipleFiles: Type.Optional(Type.Boolean()),
    allowedFileExtensions: Type.Optional(list(Type.String(), DEFINITION_LIMITS.choices)),
    maxSizeInMB: Type.Optional(Type.Number()),
    /** A call to action that opens a link: only such a CTA has a card in the summary. */
    buttonExternal: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type Element = Static<typeof Element>;

export const Block = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    type: Type.Optional(Type.Literal('question')),
    name: Type.Optional(Type.String()),
    elements: list(Element, DEFINITION_LIMITS.questions),
    /** Formbricks' logic rules and fallback target, kept as sent (see logic.ts). */
    logic: Type.Optional(Type.Unknown()),
    logicFallback: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);
export type Block = Static<typeof Block>;

export const Ending = Type.Object(
  { id: Type.String({ minLength: 1 }), type: Type.Optional(Type.String()) },
  { additionalProperties: true },
);
export type Ending = Static<typeof Ending>;

export const QuotaCriterion = Type.Object({
  questionId: Type.String({ minLength: 1 }),
  operator: Type.Union([
    Type.Literal('equals'),
    Type.Literal('notEquals'),
    Type.Literal('includes'),
    Type.Literal('greaterThan'),
    Type.Literal('lessThan'),
    Type.Literal('isSubmitted'),
    Type.Literal('isSkipped'),
  ]),
  value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
});
export type QuotaCriterion = Static<typeof QuotaCriterion>;

export const Quota = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 255 }),
    name: Type.Optional(Type.String()),
    limit: Type.Integer({ minimum: 1 }),
    conditions: Type.Optional(
      Type.Object({
        connector: Type.Union([Type.Literal('and'), Type.Literal('or')]),
        criteria: list(QuotaCriterion, DEFINITION_LIMITS.criteria),
      }),
    ),
    /** Count partial responses too (default: only finished ones). */
    countPartialSubmissions: Type.Optional(Type.Boolean()),
    action: Type.Union([Type.Literal('endSurvey'), Type.Literal('continueSurvey')]),
    endingCardId: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type Quota = Static<typeof Quota>;

/** Every question of a survey, from its blocks (current format) or legacy `questions`. */
export function questionsOf(survey: {
  blocks: readonly unknown[];
  questions?: readonly unknown[];
}): Element[] {
  const blocks = survey.blocks as Block[];
  if (blocks.length > 0) return blocks.flatMap((b) => b.elements ?? []);
  return (survey.questions ?? []) as Element[];
}
