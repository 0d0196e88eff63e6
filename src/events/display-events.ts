// The contract of the public `display-events` topic, written by the display processor, keyed by
// display id: each display stored ("survey was shown"), to compare with the responses.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { FactEnvelope, OrNull } from './facts.ts';

export const DisplayCreatedFact = Type.Object({
  type: Type.Literal('display.created'),
  ...FactEnvelope,
  displayId: Type.String(),
  surveyId: Type.String(),
  contactId: OrNull(Type.String()),
});
export type DisplayCreatedFact = Static<typeof DisplayCreatedFact>;
export const DisplayFactCheck = Compile(DisplayCreatedFact);

/** A display is stored once: its fact is named by it. */
export const displayFactId = (displayId: string) => `${displayId}:created`;
