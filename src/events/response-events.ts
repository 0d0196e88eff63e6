// The contract of the `response-events` topic, written by the response processor, keyed by
// response id: what downstream consumers (integrations, analysts) learn about responses.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { Envelope } from './envelope.ts';

export const ResponseFinished = Type.Object({
  type: Type.Literal('response.finished'),
  ...Envelope,
  responseId: Type.String(),
  surveyId: Type.String(),
  /** The merged response as stored when it finished. */
  response: Type.Record(Type.String(), Type.Unknown()),
});
export type ResponseFinished = Static<typeof ResponseFinished>;
export const ResponseFinishedCheck = Compile(ResponseFinished);

/** Deterministic: a redelivered batch announces the same finish with the same id. */
export const finishedEventId = (responseId: string) => `${responseId}:finished`;
