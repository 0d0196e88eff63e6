// The contract of the `displays` topic, keyed by display id.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { CommandEnvelope, ContactKnown } from './envelope.ts';

export const DisplayCreated = Type.Object({
  type: Type.Literal('display.created'),
  ...CommandEnvelope,
  displayId: Type.String(),
  surveyId: Type.String(),
  userId: Type.Optional(Type.String()),
  contactId: Type.Optional(Type.String()),
  /** The edge knew the contact (ContactKnown): the processor does not create it. */
  contactKnown: ContactKnown,
});
export type DisplayCreated = Static<typeof DisplayCreated>;
export const DisplayCreatedCheck = Compile(DisplayCreated);
