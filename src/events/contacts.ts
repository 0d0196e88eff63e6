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
  /**
   * The type a key gets if this identify creates it, as Formbricks' SDK path types a new key: a
   * value sent as a JSON number makes a `number` key, an ISO-8601 date a `date` key; any other
   * value (and an existing key) is left as it is. Absent in commands of older edges.
   */
  attributeTypes: Type.Optional(
    Type.Record(Type.String(), Type.Union([Type.Literal('number'), Type.Literal('date')])),
  ),
});
export type ContactIdentified = Static<typeof ContactIdentified>;

export const ContactCommand = ContactIdentified;
export type ContactCommand = Static<typeof ContactCommand>;
export const ContactCommandCheck = Compile(ContactCommand);

export const contactKey = (environmentId: string, userId: string) => `${environmentId}:${userId}`;
