// The contract of the public `contact-events` topic, keyed by contact id: a contact first stored
// (`contact.identified`), its user id or attributes changed (`contact.updated`), and its deletion
// (`contact.deleted`), which carries ids only, so that downstream stores can erase the person and
// nothing personal is written again.
import Type, { type Static } from 'typebox';
import { FactEnvelope } from './facts.ts';

const contactFact = <T extends string>(type: T) =>
  Type.Object({
    type: Type.Literal(type),
    ...FactEnvelope,
    contactId: Type.String(),
    userId: Type.String(),
    /** Every attribute the contact has after the change (`userId` and `email` included). */
    attributes: Type.Record(Type.String(), Type.String()),
  });

export const ContactIdentifiedFact = contactFact('contact.identified');
export const ContactUpdatedFact = contactFact('contact.updated');
export const ContactDeletedFact = Type.Object({
  type: Type.Literal('contact.deleted'),
  ...FactEnvelope,
  contactId: Type.String(),
});

export const ContactFact = Type.Union([ContactIdentifiedFact, ContactUpdatedFact, ContactDeletedFact]);
export type ContactFact = Static<typeof ContactFact>;
