// The contract of the public `survey-events` topic, keyed by survey id: a survey created, updated
// (its definition or settings), its status changed (`previousStatus` → `status`), or deleted.
import Type, { type Static } from 'typebox';
import { FactEnvelope } from './facts.ts';

/** A survey's life: the store keeps it in this column (store/entities.ts). */
export const SURVEY_STATUSES = ['draft', 'scheduled', 'inProgress', 'paused', 'completed'] as const;
export type SurveyStatus = (typeof SURVEY_STATUSES)[number];

const Status = Type.Union(SURVEY_STATUSES.map((status) => Type.Literal(status)));

/** The survey after the change: enough to name its questions in the order they are asked. */
const SurveyFields = {
  surveyId: Type.String(),
  name: Type.String(),
  /** `link` or `app`. */
  surveyType: Type.String(),
  status: Status,
  blocks: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.Optional(Type.String()),
      elements: Type.Array(Type.Object({ id: Type.String(), type: Type.String() })),
    }),
  ),
};

export const SurveyCreatedFact = Type.Object({
  type: Type.Literal('survey.created'),
  ...FactEnvelope,
  ...SurveyFields,
});
export const SurveyUpdatedFact = Type.Object({
  type: Type.Literal('survey.updated'),
  ...FactEnvelope,
  ...SurveyFields,
});
export const SurveyStatusChangedFact = Type.Object({
  type: Type.Literal('survey.status_changed'),
  ...FactEnvelope,
  ...SurveyFields,
  previousStatus: Status,
});
export const SurveyDeletedFact = Type.Object({
  type: Type.Literal('survey.deleted'),
  ...FactEnvelope,
  surveyId: Type.String(),
});

export const SurveyFact = Type.Union([
  SurveyCreatedFact,
  SurveyUpdatedFact,
  SurveyStatusChangedFact,
  SurveyDeletedFact,
]);
export type SurveyFact = Static<typeof SurveyFact>;
