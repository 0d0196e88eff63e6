// The contract of the `contacts` topic, keyed by `environmentId:userId` so that all changes of one
// contact are applied in order.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { CommandEnvelope } from './envelope.ts';

export const ContactIdentified = Type.Object({
  type: Type.Literal('contact.identified'),
  ...CommandEnvelope,
  contactId: Type.String(),
  userId: Type.String(),
  /** Sent attributes: they overwrite stored ones with the same key; others are kept. */
  attributes: Type.Record(Type.String(), Type.String()),
});
export type ContactIdentified = Static<typeof ContactIdentified>;

export const ContactCommand = ContactIdentified;
export type ContactCommand = Static<typeof ContactCommand>;
export const ContactCommandCheck = Compile(ContactCommand);

export const contactKey = (environmentId: string, userId: string) => `${environmentId}:${userId}`;
